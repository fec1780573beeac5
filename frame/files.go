package frame

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	aarray "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/gocu-dev/gocu"
)

// ReadParquet reads a Parquet file into a frame on dev, decoding the
// columns in parallel on the host (see FromRecord for the types). String
// columns are read as dictionaries, so they arrive as Categorical
// columns, encoded once. A file that is not valid Parquet is an ErrFormat
// error.
func ReadParquet(dev *gocu.Device, r parquet.ReaderAtSeeker) (f *Frame, err error) {
	const op = "ReadParquet"
	defer recovered(op, &err)
	mem := memory.DefaultAllocator
	rdr, err := file.NewParquetReader(r, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		return nil, wrapErr(op, ErrFormat, err, "reading the footer")
	}
	defer rdr.Close()
	props := pqarrow.ArrowReadProperties{Parallel: true, BatchSize: 1 << 20}
	sch := rdr.MetaData().Schema
	for i := 0; i < sch.NumColumns(); i++ {
		c := sch.Column(i)
		if c.PhysicalType() == parquet.Types.ByteArray && c.LogicalType() != nil && c.LogicalType().Equals(schema.StringLogicalType{}) {
			props.SetReadDict(i, true)
		}
	}
	var tbl arrow.Table
	if n := rdr.NumRowGroups(); n > 1 && runtime.GOMAXPROCS(0) > 1 {
		tbl, err = readRowGroups(r, rdr, props, n)
	} else {
		var fr *pqarrow.FileReader
		if fr, err = pqarrow.NewFileReader(rdr, props, mem); err == nil {
			tbl, err = fr.ReadTable(context.Background())
		}
	}
	if err != nil {
		return nil, wrapErr(op, ErrFormat, err, "reading the file")
	}
	defer tbl.Release()
	f, err = FromTable(dev, tbl)
	if err != nil {
		return nil, retag(op, err)
	}
	return f, nil
}

// readRowGroups decodes a file's row groups on all cores, each core
// reading whole row groups with its columns in turn.
func readRowGroups(r parquet.ReaderAtSeeker, rdr *file.Reader, props pqarrow.ArrowReadProperties, n int) (arrow.Table, error) {
	mem := memory.DefaultAllocator
	props.Parallel = false
	tables := make([]arrow.Table, n)
	errs := make([]error, n)
	leaves := make([]int, rdr.MetaData().Schema.NumColumns())
	for i := range leaves {
		leaves[i] = i
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			var i int
			defer func() {
				if p := recover(); p != nil && i < n {
					errs[i] = fmt.Errorf("row group %d: %v", i, p)
				}
			}()
			fr, err := file.NewParquetReader(r, file.WithReadProps(parquet.NewReaderProperties(mem)), file.WithMetadata(rdr.MetaData()))
			var ar *pqarrow.FileReader
			if err == nil {
				ar, err = pqarrow.NewFileReader(fr, props, mem)
			}
			for i = int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err != nil {
					errs[i] = err
					continue
				}
				tables[i], errs[i] = ar.ReadRowGroups(context.Background(), leaves, []int{i})
			}
		})
	}
	wg.Wait()
	release := func() {
		for _, t := range tables {
			if t != nil {
				t.Release()
			}
		}
	}
	for i, err := range errs {
		if err != nil {
			release()
			return nil, fmt.Errorf("row group %d: %w", i, err)
		}
	}
	defer release()
	schema := tables[0].Schema()
	cols := make([]arrow.Column, schema.NumFields())
	rows := int64(0)
	for _, t := range tables {
		if !t.Schema().Equal(schema) {
			return nil, errors.New("row groups of different schemas")
		}
		rows += t.NumRows()
	}
	for c := range cols {
		var chunks []arrow.Array
		for _, t := range tables {
			chunks = append(chunks, t.Column(c).Data().Chunks()...)
		}
		ch := arrow.NewChunked(schema.Field(c).Type, chunks)
		cols[c] = *arrow.NewColumn(schema.Field(c), ch)
		ch.Release()
	}
	tbl := aarray.NewTable(schema, cols, rows)
	for i := range cols {
		cols[i].Release()
	}
	return tbl, nil
}

// WriteParquet writes the frame as a Parquet file, Snappy-compressed, in
// row groups of 2^20 rows. It does not close w.
func (f *Frame) WriteParquet(w io.Writer) error {
	const op = "WriteParquet"
	rec, err := f.Record()
	if err != nil {
		return err
	}
	defer rec.Release()
	tbl := aarray.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true))
	// pqarrow closes a writer that is an io.Closer: hide Close from it.
	if err := pqarrow.WriteTable(tbl, struct{ io.Writer }{w}, 1<<20, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
		return wrapErr(op, ErrValue, err, "writing")
	}
	return nil
}

// ipcMagic starts an Arrow IPC file (as opposed to a stream).
var ipcMagic = []byte("ARROW1")

// ReadIPC reads Arrow IPC data, the stream or the file format, into a frame
// on dev. Malformed data is an ErrFormat error.
func ReadIPC(dev *gocu.Device, r io.Reader) (f *Frame, err error) {
	const op = "ReadIPC"
	defer recovered(op, &err)
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, wrapErr(op, ErrFormat, err, "reading")
	}
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	// An IPC file holds a stream after its 8-byte magic; reading that
	// stream avoids trusting the footer.
	if bytes.HasPrefix(data, ipcMagic) {
		data = data[min(8, len(data)):]
	}
	if err := checkIPCStream(data); err != nil {
		return nil, wrapErr(op, ErrFormat, err, "checking the stream")
	}
	sr, err := ipc.NewReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, wrapErr(op, ErrFormat, err, "reading the schema")
	}
	defer sr.Release()
	schema := sr.Schema()
	for sr.Next() {
		rec := sr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := sr.Err(); err != nil {
		return nil, wrapErr(op, ErrFormat, err, "record batch %d", len(recs))
	}
	for i, rec := range recs {
		if err := validate(rec); err != nil {
			return nil, wrapErr(op, ErrFormat, err, "record batch %d", i)
		}
	}
	tbl := aarray.NewTableFromRecords(schema, recs)
	defer tbl.Release()
	f, err = FromTable(dev, tbl)
	if err != nil {
		return nil, retag(op, err)
	}
	return f, nil
}

// validate checks a record's arrays fully: offsets and lengths inside
// their buffers, so that reading values cannot go out of range.
func validate(rec arrow.RecordBatch) error {
	for i := 0; i < int(rec.NumCols()); i++ {
		c := rec.Column(i)
		if int64(c.Len()) != rec.NumRows() {
			return errors.New("column length differs from the record's")
		}
		if v, ok := c.(interface{ ValidateFull() error }); ok {
			if err := v.ValidateFull(); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteIPC writes the frame in Arrow's IPC stream format.
func (f *Frame) WriteIPC(w io.Writer) error {
	const op = "WriteIPC"
	rec, err := f.Record()
	if err != nil {
		return err
	}
	defer rec.Release()
	iw := ipc.NewWriter(w, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(memory.DefaultAllocator))
	if err := iw.Write(rec); err != nil {
		iw.Close()
		return wrapErr(op, ErrValue, err, "writing")
	}
	if err := iw.Close(); err != nil {
		return wrapErr(op, ErrValue, err, "closing")
	}
	return nil
}

// retag renames the operation of a frame error to op.
func retag(op string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Op = op
		return &c
	}
	return err
}
