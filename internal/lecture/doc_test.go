package lecture_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTensorCoresDoc checks the code listings of docs/tensor-cores.md: a
// block after a "<!-- from: FILE -->" marker must appear verbatim in the
// file, so that the page cannot drift from the kernels.
func TestTensorCoresDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/tensor-cores.md")
	if err != nil {
		t.Skipf("no docs here: %v", err)
	}
	re := regexp.MustCompile("(?m)^<!-- from: (\\S+) -->\n```go\n((?s:.*?))```\n")
	n := 0
	for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
		n++
		src, err := os.ReadFile(filepath.Join("../..", m[1]))
		if err != nil {
			t.Error(err)
			continue
		}
		if !strings.Contains(string(src), m[2]) {
			t.Errorf("docs/tensor-cores.md: this listing is not in %s; update the page:\n%s", m[1], m[2])
		}
	}
	if want := strings.Count(string(doc), "<!-- from: "); n != want || n == 0 {
		t.Errorf("%d listings checked, %d markers", n, want)
	}
}
