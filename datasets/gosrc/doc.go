// Package gosrc makes a byte-level language-modelling corpus of the Go
// source tree that every Go toolchain carries ($(go env GOROOT)/src, about
// 100 MB of .go files), so that a model trains on real code with nothing
// downloaded.
//
// Pack walks a folder in lexical order (filepath.WalkDir's), takes every
// regular file whose name ends in ".go", and puts each whole file in the
// training or the validation split by a hash of its path: FNV-1a (64
// bits) of the path relative to the folder, with forward slashes, modulo
// 1,000,000, below ValFraction·1,000,000 goes to validation. The same
// folder gives the same bytes on every machine.
//
// # The packed file
//
// A machine without Go (a GPU machine) gets the corpus as one file. All
// numbers are little-endian:
//
//	offset size
//	0      8    magic "GOSRCTOK"
//	8      4    version, 1
//	12     4    header size in bytes, 64: the tokens start there
//	16     4    vocabulary, 256 (a token is a byte)
//	20     4    bytes per token, 1
//	24     8    training tokens
//	32     8    validation tokens
//	40     4    training files
//	44     4    validation files
//	48     4    CRC-32 (IEEE, zlib's) of the tokens, training then validation
//	52     4    validation fraction in parts per million
//	56     8    zero
//	64          the training tokens, then the validation tokens; the file ends there
//
// NumPy reads it with
//
//	h = np.fromfile(path, np.uint8, 64)
//	n_train, n_val = h[24:40].view("<u8")
//	data = np.memmap(path, np.uint8, "r", offset=64)
//	train, val = data[:n_train], data[n_train:n_train + n_val]
//
// The file may be gzip-compressed as a whole (WriteFile to a name ending
// in ".gz": 18 MB for Go 1.26's 90 MB), which ReadFile and Read tell by
// its first bytes; gunzip gives the file above. Parse, Read and ReadFile
// check every field, the size and the checksum, and say what is wrong
// with a truncated or corrupt file; Parse and Read are fuzzed.
//
// # Batches
//
// A Sampler draws training batches as nanoGPT does: B windows of T+1
// tokens at uniformly random offsets of a split, from a seeded generator,
// so that inputs are a window's first T tokens and targets its last T.
package gosrc
