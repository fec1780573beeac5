// Package safetensors reads and writes arrays in the safetensors format
// (https://github.com/huggingface/safetensors), which PyTorch, JAX and the
// Hugging Face tools use to move weights: an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range
// (and optional string metadata), then the tensors' little-endian,
// row-major bytes.
//
// Read checks the whole file against the format and names what is wrong
// (errors wrap ErrFormat): truncation anywhere, a header length beyond the
// file or MaxHeader, bad JSON, unknown dtypes, negative or overflowing
// shapes, byte ranges that do not match their shape or that overlap,
// leave holes or run past the data, trailing bytes, repeated names. It
// never allocates what a header claims, only what the file holds, and it
// is fuzzed (FuzzRead, seed corpus in testdata/fuzz). The dtypes array has
// (BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, F8_E4M3,
// F8_E5M2) load as arrays, bit for bit; files with others (C64, F4, ...) are valid but
// give an error naming the tensor. Write writes
// any arrays (strided views row-major) with the header padded to 8 bytes.
// Package nn saves and loads models with it.
package safetensors
