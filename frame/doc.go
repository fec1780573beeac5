// Package frame provides dataframes on a gocu device: tables of named,
// typed columns in Arrow's layout whose operations run through package
// array, on a GPU when there is one and on all CPU cores otherwise.
//
//	f, _ := frame.ReadParquet(dev, r, size)
//	big, _ := f.Filter(frame.Col("v3").Gt(50))
//	g, _ := big.GroupBy("id1").Agg(frame.Sum("v1"), frame.Mean("v3"))
//	fmt.Println(g)
//
// # Columns
//
// A Series holds numbers and booleans in an *array.Array of any array
// dtype, timestamps as int64 nanoseconds (UTC), strings in Arrow's
// large-string layout (int64 offsets and UTF-8 bytes) and categoricals as
// int32 codes into a dictionary of strings. Nulls are a Bool validity array
// beside the values (Arrow's validity bitmap, one byte per row on the
// device so that array's elementwise programs can combine it); a column
// without nulls has none. String bytes and offsets stay on the host for
// now: operations on strings (take, grouping and joining by string keys)
// gather them on the host or dictionary-encode them first and work on the
// codes on the device.
//
// # Nulls
//
// Arithmetic and comparisons give null where an operand is null; And and
// Or follow Kleene's logic (false and null is false, true or null is
// true), as Arrow and pandas' nullable booleans do. Filter drops rows
// whose condition is null. Aggregations skip nulls, and for floats NaN,
// as pandas does (Arrow keeps NaN); Count counts the values present; an
// aggregation of a group with no value present is null. Group-by drops
// rows with a null key (pandas' dropna=True). Joins never match null keys
// (Arrow and SQL; pandas matches NaN with NaN). Sorting places nulls and
// NaN first or last as asked; pandas always treats NaN as null, so does
// Sort.
//
// # Algorithms
//
// Sorting applies array's stable Argsort key by key from the last key to
// the first. Group-by is sort-based: array's UniqueAll gives every row its
// group, and IndexAdd, ScatterMax and Take reduce per group; the median
// sorts the values within groups. Joins are sort-merge joins: both sides'
// keys are encoded into one code space, counted per code and expanded
// with SearchSorted and Cumsum. Hash-based group-by and hash joins (with
// atomics on the GPU, as libcudf) are future work.
//
// # Input and output
//
// ReadCSV, ReadParquet, ReadIPC and FromRecord decode through
// github.com/apache/arrow-go/v18 on the host (its pure-Go packages; never
// cdata, which needs cgo) and upload each column; on the CPU a numeric
// column without nulls is used in place, without a copy. WriteParquet,
// WriteIPC and Record convert back. Corrupt files are errors, never
// crashes: a panic inside arrow-go is recovered and returned as ErrFormat.
package frame
