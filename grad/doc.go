// Package grad differentiates computations on arrays in reverse mode, as
// PyTorch's autograd: operations on Vars record, as they run, how each
// value was made, and Backward walks that record from a loss back to the
// parameters.
//
//	w := grad.Param(array.NewRNG(1).Normal(array.Float32, 0, 0.1, 784, 10))
//	b := grad.Param(array.Zeros(array.Float32, 10))
//	x := grad.Const(batch)                      // (64, 784), no gradient
//	loss := x.MatMul(w).Add(b).LogSoftmax(1).Mul(onehot).Sum().Mul(-1.0 / 64)
//	if err := loss.Backward(); err != nil { ... }
//	w.Grad(), b.Grad()                          // arrays of w's and b's shapes
//
// # Why a package of its own
//
// Gradients could have been hooks inside package array (every Array
// remembering its inputs) or a type that wraps arrays here. They live here:
//
//   - array stays a NumPy library: its operations, which must cost a few
//     microseconds on a GPU, record nothing and keep nothing alive for a
//     gradient nobody asked for; its hot paths know nothing of this package.
//   - What is differentiable is explicit and typed: a Var's methods are the
//     operations that have gradients (arithmetic, functions, reductions,
//     softmax, products, views), and only float results carry history
//     (float16 and bfloat16 included, the 8-bit floats not);
//     comparisons, ArgMax and the like stay on arrays (v.Value().Gt(0)).
//   - The record has a clear owner and lifetime: the Vars of one
//     computation, released by Backward, never an array that outlives it.
//
// Go has no operator overloading, so chains of methods are the expression
// syntax either way: x.MatMul(w).Add(b).ReLU() reads the same on a Var as
// on an Array. The cost is a thin wrapper per operation; Value and Const
// convert.
//
// # Recording and Backward
//
// Param makes a leaf that requires a gradient (a parameter); Const a leaf
// that does not (inputs, targets); an operation's result requires one when
// any input does, and then remembers its inputs and gradient function.
// Binary operations take *Var, *array.Array (constants) or Go numbers,
// with package array's broadcasting and promotion; the gradient of a
// broadcast operand is summed back to its shape, and a gradient is
// converted to its Var's dtype.
//
// Backward (one-element Vars) and BackwardWith (any Var, with the
// gradient of the output given) visit the recorded graph once in reverse
// topological order and add each parameter's gradient to its Grad:
// gradients accumulate over calls until ZeroGrad, which clears them (set
// to none: the next Backward sets instead of adding). The graph is then
// released; a second Backward through it is an error. Of returns the
// gradients with respect to any Vars, parameters or intermediate, without
// touching Grad. Func records a custom operation with its own gradient,
// as torch.autograd.Function.
//
// NoGrad runs a function with recording off (evaluation, inference,
// optimiser updates): results have no history and keep nothing alive. The
// switch is process-wide (Go has no goroutine-local state). Detach returns
// a leaf holding a Var's value without its history.
//
// # Gradients
//
// Every differentiable operation of package array has its gradient:
// arithmetic (Add, Sub, Mul, Div, Pow, Mod, Maximum, Minimum, Clip,
// Where, Arctan2, Hypot, Copysign), functions (Exp, Log, Sqrt, Tanh,
// Sigmoid, ReLU, Sin, Arcsin, Sinh, Erf, ... and their variants), AsType, reductions (Sum, Mean, Prod, Max, Min with any axes,
// with and without keepDims), Softmax, LogSoftmax, LogSumExp, MatMul
// (matrices, batches with broadcast batch axes, vectors, transposed
// views: the gradients are products with transposed views, which the
// matrix engine takes as transpose flags, not copies), and views (Reshape,
// Transpose, SwapAxes, MoveAxis, Squeeze, ExpandDims,
// BroadcastTo, Slice with steps, At, Concat, Stack). At points where a
// function is not differentiable the gradient is: 0 for ReLU and Abs at 0;
// for Max and Min, the element ArgMax/ArgMin chooses (the first extreme in
// row-major order of the reduced axes); for Maximum and Minimum, the
// receiver on ties; 0 for Sign, Floor, Ceil, Round, Trunc and FloorDiv,
// whose results carry no history; none for Copysign's sign operand. Package
// array's op table records each operation's decision, and a test checks
// that this package follows it.
//
// Package linalg's functions have theirs as package functions here:
// Einsum, Solve, Inv, Slogdet (of logabsdet), Cholesky, Eigh (eigenvalues
// and eigenvectors; the eigenvector gradient is undefined where
// eigenvalues repeat, see Eigh) and Norm. Cholesky and Eigh read only the
// lower triangle, and their gradients are the derivatives of exactly that.
//
// Package fft's FFT, IFFT, RFFT and IRFFT have theirs too, with complex
// signals as pairs of real Vars (real and imaginary parts): gradients
// flow through float arrays only. Their gradients are the adjoint
// transforms.
//
// Gradients are computed with array operations, so they are lazy like
// the forward pass: the backward pass of an elementwise chain is one
// pending expression, evaluated as one fused kernel when it is used (the
// ReLU mask, the bias gradient's input and an optimiser's read of it fuse
// the same way). Check compares any function's gradients with central
// finite differences; the tests check every operation in float64 on the
// CPU and, when there is one, on the GPU.
//
// # Memory and errors
//
// Backward closes the gradient arrays it makes as soon as no Var's
// gradient holds them, so their memory returns to the device at once;
// the values the forward pass saved for it are released with the graph.
// Inside an array scope they stay allocated until the scope closes;
// BackwardFree closes each intermediate value, and what each gradient
// function made for itself, as soon as the pass is done with it, so that
// a training step's peak memory is the forward pass's, as in PyTorch.
// An operation on a failed Var returns a failed Var (array's sticky
// errors); Backward reports a failed loss, and an error of the backward
// operations themselves surfaces where the gradient is read (Grad().Err(),
// an optimiser's Step).
package grad
