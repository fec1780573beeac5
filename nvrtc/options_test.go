package nvrtc

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	o := Options{
		Arch:         "sm_90",
		Std:          "c++17",
		Defines:      map[string]string{"N": "128", "FAST": "", "A": "x y"},
		IncludePaths: []string{"/opt/inc", "rel/inc"},
		NoFMAD:       true,
		FastMath:     true,
		LineInfo:     true,
		Debug:        true,
		Extra:        []string{"--maxrregcount=32", "-restrict"},
	}
	want := []string{
		"--gpu-architecture=sm_90", "--no-source-include", "--std=c++17",
		"--define-macro=A=x y", "--define-macro=FAST", "--define-macro=N=128",
		"--include-path=/opt/inc", "--include-path=rel/inc",
		"--fmad=false", "--use_fast_math", "--generate-line-info", "--device-debug",
		"--maxrregcount=32", "-restrict",
	}
	if got := o.Args(); !reflect.DeepEqual(got, want) {
		t.Errorf("Args() =\n%q\nwant\n%q", got, want)
	}
	if got := (&Options{Arch: "compute_80", SearchSourceDir: true}).Args(); !reflect.DeepEqual(got, []string{"--gpu-architecture=compute_80"}) {
		t.Errorf("minimal Args() = %q", got)
	}
}

func TestParseArch(t *testing.T) {
	for _, c := range []struct {
		arch   string
		format Format
		cc     int
	}{
		{"sm_90", CUBIN, 90}, {"sm_90a", CUBIN, 90}, {"compute_90", PTX, 90}, {"sm_120", CUBIN, 120},
		{"compute_100f", PTX, 100}, {SM(8, 6), CUBIN, 86}, {Compute(7, 5), PTX, 75},
	} {
		f, cc, err := ParseArch(c.arch)
		if err != nil || f != c.format || cc != c.cc {
			t.Errorf("ParseArch(%q) = %v, %d, %v", c.arch, f, cc, err)
		}
	}
	for _, bad := range []string{"", "sm90", "sm_9", "sm_09", "compute_", "lto_90", "sm_90 ", "SM_90", "sm_90x"} {
		if _, _, err := ParseArch(bad); !errors.Is(err, InvalidOption) {
			t.Errorf("ParseArch(%q) accepted (err %v)", bad, err)
		}
	}
	if CUBIN.String() != "CUBIN" || PTX.String() != "PTX" || Format(9).String() != "Format(9)" {
		t.Error("Format.String")
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		o    Options
		want string
	}{
		"missing arch":      {Options{}, `Arch ""`},
		"NUL in name":       {Options{Arch: "sm_90", Name: "a\x00b"}, "Name"},
		"bad std":           {Options{Arch: "sm_90", Std: "17"}, "Std"},
		"empty header name": {Options{Arch: "sm_90", Headers: map[string]string{"": "x"}}, "empty name"},
		"NUL in header":     {Options{Arch: "sm_90", Headers: map[string]string{"h": "a\x00"}}, `header "h"`},
		"bad macro name":    {Options{Arch: "sm_90", Defines: map[string]string{"A=1": ""}}, `"A=1" is not a macro name`},
		"newline in macro":  {Options{Arch: "sm_90", Defines: map[string]string{"A": "1\n2"}}, "newline"},
		"empty include":     {Options{Arch: "sm_90", IncludePaths: []string{""}}, "IncludePaths"},
		"NUL in extra":      {Options{Arch: "sm_90", Extra: []string{"-a\x00"}}, "Extra"},
		"empty expression":  {Options{Arch: "sm_90", NameExpressions: []string{" "}}, "name expression"},
		"twice expression":  {Options{Arch: "sm_90", NameExpressions: []string{"f<int>", "f<int>"}}, "given twice"},
	}
	for name, c := range cases {
		_, err := c.o.validate()
		if !errors.Is(err, InvalidOption) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "nvrtc: invalid option: ") {
			t.Errorf("%s: err = %v, want one mentioning %q", name, err, c.want)
		}
		// Compile rejects them before touching the library.
		if _, err := Compile("", c.o); !errors.Is(err, InvalidOption) {
			t.Errorf("%s: Compile err = %v", name, err)
		}
	}
	if f, err := (&Options{Arch: "compute_90"}).validate(); err != nil || f != PTX {
		t.Errorf("valid options rejected: %v", err)
	}
}
