package cusolver

import "fmt"

// Op says how a matrix enters Getrs (cublasOperation_t).
type Op int32

// The operations.
const (
	NoTrans Op = 0 // CUBLAS_OP_N: the matrix as stored
	Trans   Op = 1 // CUBLAS_OP_T: its transpose
)

func (o Op) String() string {
	switch o {
	case NoTrans:
		return "N"
	case Trans:
		return "T"
	}
	return fmt.Sprintf("Op(%d)", int32(o))
}

// Fill says which triangle of a symmetric matrix is read or written
// (cublasFillMode_t).
type Fill int32

// The triangles.
const (
	Lower Fill = 0 // CUBLAS_FILL_MODE_LOWER
	Upper Fill = 1 // CUBLAS_FILL_MODE_UPPER
)

func (f Fill) String() string {
	switch f {
	case Lower:
		return "lower"
	case Upper:
		return "upper"
	}
	return fmt.Sprintf("Fill(%d)", int32(f))
}

// EigMode says whether eigen- and singular vectors are computed
// (cusolverEigMode_t).
type EigMode int32

// The modes.
const (
	NoVectors EigMode = 0 // CUSOLVER_EIG_MODE_NOVECTOR
	Vectors   EigMode = 1 // CUSOLVER_EIG_MODE_VECTOR
)

// Job says which singular vectors Gesvd computes (its jobu and jobvt
// characters).
type Job byte

// The jobs.
const (
	JobAll  Job = 'A' // all m columns of U (rows of Vᵀ)
	JobSome Job = 'S' // the first min(m, n)
	JobNone Job = 'N' // none
)
