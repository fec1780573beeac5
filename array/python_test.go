package array

import "os/exec"

func runPython(py, code string) (string, error) {
	out, err := exec.Command(py, "-c", code).CombinedOutput()
	return string(out), err
}
