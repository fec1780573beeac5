// Package backend is the contract between package array and the engines
// that run its operations: the pure-Go CPU backend (package cpu) and the
// CUDA backend.
//
// It holds the vocabulary both sides share: element types (DType), strided
// layouts (Layout), the fused elementwise program (Program, a small typed
// expression DAG whose leaves are strided operands and scalar parameters),
// reduction, softmax-family, matmul and random-fill requests, and the
// Backend interface itself. Package array does every semantic decision
// (broadcasting, type promotion, casts, axis handling) before it calls a
// backend, so a backend only executes well-formed, fully typed requests.
package backend
