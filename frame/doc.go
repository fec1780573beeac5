// Package frame provides dataframes on a gocu device: tables of named,
// typed columns in Arrow's layout whose operations run through package
// array, on a GPU when there is one and on all CPU cores otherwise.
//
//	x, err := frame.ReadParquet(dev, file)
//	big, err := x.Filter(frame.Col("v3").Gt(50))
//	g, err := big.GroupBy("id1").Agg(frame.Sum("v1"), frame.Mean("v3"))
//	j, err := g.Join(names, frame.Left, "id1")
//	fmt.Println(j)
//
// # Columns
//
// A Series holds numbers and booleans in an *array.Array of any array
// dtype, timestamps as int64 nanoseconds (UTC), strings in Arrow's
// large-string layout (int64 offsets and UTF-8 bytes) and categoricals as
// int32 codes into a dictionary of strings. Nulls are a Bool validity array
// beside the values (Arrow's validity bitmap held one byte per row on the
// device, so that array's fused programs combine it with the values); a
// column without nulls has none. String bytes and offsets stay on the
// host for now: operations that move string rows (Take, Filter, Sort,
// joins) gather them on the host, and those that compare strings
// (grouping, joining, sorting by, comparing with a constant, the Str
// functions) encode the column once in a sorted dictionary and work on
// the codes on the device.
//
// Frames and series are immutable: operations return new ones, which may
// share memory with their inputs. Results are often lazy arrays (fused
// elementwise programs); Eval computes them, and reading them does too.
// A frame has no index: printing numbers the rows from 0.
//
// # Expressions
//
// Col, Lit and the methods of Expr build column expressions, evaluated
// through array's lazy elementwise operations by With (a new column) and
// Filter (a row selection): Col("x").Mul(Col("y")).Add(1) runs as one
// fused program.
//
// # Nulls
//
// Arithmetic and comparisons give null where an operand is null (NaN
// compares false, as in NumPy and pandas); And and Or follow Kleene's
// logic (false and null is false, true or null is true), as Arrow and
// pandas' nullable booleans do. Filter drops rows whose condition is
// null. Aggregations skip nulls and, like pandas, NaN (Arrow keeps NaN);
// Count counts the values present; Sum of a group without values is 0
// and the other aggregations are null there. GroupBy drops rows with a
// null key (pandas' dropna=True) unless KeepNulls is set. Joins never
// match null keys (SQL and Arrow; pandas matches NaN with NaN). Sort puts
// nulls and NaN together, last or first as asked (pandas' na_position);
// DropDuplicates treats nulls as equal, as pandas does.
//
// Where results are ordered, they follow pandas 2.2's documentation:
// group-by results are sorted by the keys; an inner or left join keeps
// the left rows' order (pandas 1.5 groups an inner join's rows by key); an
// outer join is sorted by the keys.
//
// # Algorithms
//
// Keys become int64 codes ordered as the keys: an integer key of small
// range (at most twice the rows, or 2^16), a dictionary code or a boolean
// is its own code less its minimum, a direct index with no sort. A wider
// integer key goes into a hash table (open addressing, linear probing,
// compare-and-swap on 64-bit keys, twice the rows' slots; in device
// memory on a GPU, as libcudf does, and in Go on all cores on the CPU)
// and only its distinct keys are sorted, to number the groups in key
// order. Float keys are ranked by array's UniqueAll, a sort. Several keys
// combine their codes into one.
//
// Sort applies array's stable Argsort (SortDescending for descending keys)
// key by key from the last key to the first, then gathers every column by
// the permutation. GroupBy counts the codes present, numbers the groups
// by a Cumsum of that, and reduces per group with IndexAdd (sum, count,
// mean, var, std), ScatterMax (min, max, first, last) and, for the median,
// a sort within groups. On a GPU sums, counts, minima, maxima and first
// rows of at most 4096 groups reduce in each block's shared memory, then
// with one global atomic per group and block; more groups use global
// atomics. Var and Std add squared deviations from the mean (two passes,
// not sums of squares, which cancel).
//
// Joins count the right rows of each code, expand each left row by its
// count (Cumsum and SearchSorted) and gather from the right rows in code
// order. Inner, left, semi and anti joins on integer keys build a hash
// table of the smaller side's keys and probe it with the other side's (a
// hash join): on a GPU always, on the CPU for keys too wide to index
// directly. Outer joins and float keys rank both sides' keys together (a
// sort-merge join in effect). Either way the rows come in the order
// documented under Nulls.
//
// Float sums through atomics are not bit-reproducible on a GPU: the order
// of additions varies from run to run, so results may differ in the last
// bits (integers are exact); array's IndexAdd on a GPU is no different.
// GOCU_FRAME_HASH=0 turns the hash tables and shared-memory reductions
// off, for the sort-based paths and global atomics; =1 makes the CPU's
// joins hash narrow keys too. The CPU's results are reproducible.
//
// # Across devices
//
// Shards splits a frame by rows across the ranks of a dist.Comm, one
// Frame per device (Scatter; Gather brings the rows back to one frame).
// Partition moves the rows so that equal keys meet on one rank: each rank
// hashes the keys alike (numbers by value, strings by their bytes) and
// Comm.AllToAll exchanges the pieces, through NCCL's send and receive in
// one group on GPUs and host copies on the CPU stand-in. GroupBy reduces
// each rank's rows first and moves only the partial results (sums, counts,
// minima and maxima, first and last in rank order; for var and std the
// count, mean and squared deviations, merged as Chan et al. do); nunique
// and median move the rows. Joins partition both sides, then join rank by
// rank. The results are the one-device frame's rows, grouped by rank:
// sort them to order them. Every rank must be in this process.
//
// # Input and output
//
// ReadParquet, ReadIPC, FromRecord and FromTable decode through
// github.com/apache/arrow-go/v18 on the host (its pure-Go packages; never
// cdata, which needs cgo) and upload each column; on the CPU a numeric
// column without nulls is used in place, without a copy. ReadParquet
// decodes row groups on all cores and reads string columns as
// dictionaries (Categorical columns) unless the file's stored Arrow schema
// says otherwise. WriteParquet, WriteIPC, WriteCSV and Record convert
// back, copying. ReadCSV parses with encoding/csv, in pieces on all cores
// when the input has no quotes, and infers types as pandas does; its
// errors name the row, line and column. Corrupt files are errors
// (ErrFormat), never crashes: IPC messages are checked before arrow-go
// reads them (it would allocate what a corrupt length says) and a panic
// inside arrow-go is recovered. Decoding on the GPU is future work.
package frame
