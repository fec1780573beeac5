package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// repoRoot returns the repository's root, or skips the test where the
// sources are not beside the test binary (a GPU bundle).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skip("the repository's sources are not here")
	}
	return root
}

var (
	// A relative path to a file of the repository, as help and docs name
	// scripts, sources and documents.
	repoPath = regexp.MustCompile("(?:^|[\\s`(\\[])((?:\\./)?[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.-]+)+\\.(?:py|go|sh|md|cu|png|txt|json))\\b")
	// Markdown links, outside code.
	mdLink     = regexp.MustCompile(`\]\(([^)#\s]+)(?:#[^)]*)?\)`)
	codeBlock  = regexp.MustCompile("(?s)```.*?```")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	// What a fresh clone does not have, and words that mean nothing to a
	// user.
	notInClone = regexp.MustCompile(`\.gpu/|\.\./shared|/work/|issue \d+`)
)

// Every path that gocu's help names exists in a fresh clone, and the help
// speaks of no ignored folder, no workspace outside the repository and no
// issue numbers.
func TestHelpPathsWorkFromAClone(t *testing.T) {
	root := repoRoot(t)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		text := c.Short + "\n" + c.Long + "\n" + c.Example
		c.Flags().VisitAll(func(f *pflag.Flag) { text += "\n" + f.Usage })
		if m := notInClone.FindString(text); m != "" {
			t.Errorf("gocu %s --help mentions %q", c.CommandPath(), m)
		}
		for _, m := range repoPath.FindAllStringSubmatch(text, -1) {
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Errorf("gocu %s --help names %s, which a clone lacks", c.CommandPath(), m[1])
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot())
}

// The same for the documents: every relative link and every repository
// path they name exists, and none sends the reader outside the clone.
func TestDocPathsWorkFromAClone(t *testing.T) {
	root := repoRoot(t)
	docs := []string{"README.md", "docs/tutorial.md", "sim/BENCH.md", "array/README.md", "bench/anchors/README.md"}
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		text := string(b)
		if m := notInClone.FindString(text); m != "" {
			t.Errorf("%s mentions %q", doc, m)
		}
		prose := codeBlock.ReplaceAllString(text, "")
		prose = inlineCode.ReplaceAllString(prose, "")
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(doc), target)); err != nil {
				t.Errorf("%s links to %s, which a clone lacks", doc, target)
			}
		}
		for _, m := range repoPath.FindAllStringSubmatch(text, -1) {
			p := m[1]
			_, errRoot := os.Stat(filepath.Join(root, p))
			_, errHere := os.Stat(filepath.Join(root, filepath.Dir(doc), p))
			if errRoot != nil && errHere != nil && !generated(p) {
				t.Errorf("%s names %s, which a clone lacks", doc, p)
			}
		}
	}
}

// generated reports paths that documents name as outputs of a command,
// which a clone does not have until the command ran.
func generated(p string) bool {
	base := filepath.Base(p)
	return strings.HasPrefix(base, "zz_gocu_") || strings.HasPrefix(p, "gocu-")
}

var (
	// A script or document named without its folder: run_me.py, DESIGN.md.
	bareName = regexp.MustCompile("(?:^|[\\s`(\\[])([A-Za-z0-9_][A-Za-z0-9_-]*\\.(?:py|cu|md|ipynb))\\b")
	// Names that stand for any file of the kind, not one of the repository.
	// A go command on a folder of the repository: go run ./cmd/gocu.
	goCommand    = regexp.MustCompile(`\bgo (run|build|install|test|generate|vet)(?: -[a-z]+(?: [A-Za-z]+)?)* \./([A-Za-z0-9_./-]*[A-Za-z0-9_])`)
	placeholders = map[string]bool{"file.cu": true, "kernel.cu": true, "kernels.cu": true}
)

// Every script and document that the documents name without its folder,
// such as a peer's script or a design note, is somewhere in a clone.
func TestDocNamesInClone(t *testing.T) {
	root := repoRoot(t)
	have := map[string]bool{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		have[d.Name()] = true
		return nil
	})
	for _, doc := range []string{"README.md", "docs/tutorial.md", "docs/tensor-cores.md", "sim/BENCH.md", "array/README.md", "bench/anchors/README.md"} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		for _, m := range goCommand.FindAllStringSubmatch(string(b), -1) {
			dir := strings.TrimSuffix(m[2], "/...")
			if dir == "kernels" {
				continue // a reader's own package, in the tutorial's transcript of gocu gen's errors
			}
			if fi, err := os.Stat(filepath.Join(root, dir)); err != nil || !fi.IsDir() {
				t.Errorf("%s runs go %s %s, but the clone has no folder %s", doc, m[1], m[2], dir)
			}
		}
		for _, m := range bareName.FindAllStringSubmatch(string(b), -1) {
			if name := m[1]; !have[name] && !placeholders[name] && !generated(name) {
				t.Errorf("%s names %s, which is nowhere in a clone", doc, name)
			}
		}
	}
}
