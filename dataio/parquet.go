package dataio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/parquet-go/parquet-go"
)

// recordColumns are the Parquet columns ReadRecords uses, those a JSONL
// row's object is read from: "prompt" and "messages" give the question
// (Record.Question) as they do in JSONL. Reading only these (a projected
// schema) skips large unused columns, and keeps column types we do not
// understand from reaching the decoder.
var recordColumns = map[string]bool{
	"id": true, "samples": true, "embeddings": true, "answer": true,
	"reference": true, "correct": true, "judge_scores": true,
	"logprobs": true, "answer_logprobs": true, "prompt": true, "messages": true,
}

// readParquet reads Records from the rows of a Parquet file. Each row is
// reconstructed into a map[string]any by parquet-go and then validated by
// the same code as a JSON object, so both formats accept the same shapes:
// LIST columns become []any, optional values nil.
func readParquet(fsys fs.FS, path string) (recs []Record, err error) {
	f, size, closeFn, err := openReaderAt(fsys, path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	row := 0
	// parquet-go is written for files its users trust and can panic on
	// corrupt ones; a user's bad file must never crash the CLI.
	defer func() {
		if r := recover(); r != nil {
			recs = nil
			err = &fault.InputError{File: path, Line: row, Msg: fmt.Sprintf("malformed Parquet file (%v)", r)}
		}
	}()
	if err := checkParquetFooter(f, size); err != nil {
		return nil, &fault.InputError{File: path, Msg: "not a valid Parquet file: " + err.Error(), Err: err}
	}
	// Page indexes and bloom filters are for filtered reads, which we never
	// do; skipping them also keeps a corrupt index from being decoded.
	pf, err := parquet.OpenFile(f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "not a valid Parquet file: " + err.Error(), Err: err}
	}
	if err := checkParquetSizes(pf, size, src{file: path}); err != nil {
		return nil, err
	}
	group := parquet.Group{}
	var names []string
	for _, fld := range pf.Schema().Fields() {
		names = append(names, fld.Name())
		if recordColumns[fld.Name()] {
			group[fld.Name()] = fld
		}
	}
	if group["samples"] == nil {
		sort.Strings(names)
		return nil, &fault.InputError{File: path, Field: "samples", Msg: fmt.Sprintf("no such column (columns: %s)", strings.Join(names, ", "))}
	}
	rd := parquet.NewReader(pf, parquet.NewSchema("record", group))
	defer rd.Close()

	d := recordDecoder{src: src{file: path}, textLimit: decompressedLimit(size), fileSize: size}
	for row = 1; ; row++ {
		m := map[string]any{} // must be non-nil: parquet-go fills, not allocates
		if err := rd.Read(&m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, &fault.InputError{File: path, Line: row, Msg: "cannot read row: " + err.Error(), Err: err}
		}
		rec, err := d.record(row, m)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return nil, &fault.InputError{File: path, Msg: "no records (no rows)"}
	}
	return recs, nil
}

// checkParquetSizes bounds, from the footer's column-chunk metadata and
// before any page is decoded, what the columns ReadRecords uses hold: their
// uncompressed size (decompressedLimit of the file size) and the samples
// per row (MaxSamplesPerRecord on average over a row group, so at least
// one row would exceed it). A 34 KB file of repeated values, compressed
// and dictionary-encoded, decoded to 0.9 GB before either was checked.
func checkParquetSizes(pf *parquet.File, size int64, s src) error {
	var total int64
	for _, rg := range pf.Metadata().RowGroups {
		for _, cc := range rg.Columns {
			md := cc.MetaData
			if len(md.PathInSchema) == 0 || !recordColumns[md.PathInSchema[0]] {
				continue
			}
			if md.TotalUncompressedSize > 0 {
				total += md.TotalUncompressedSize
			}
			if md.PathInSchema[0] == "samples" && md.NumValues > int64(MaxSamplesPerRecord)*max(rg.NumRows, 1) {
				return s.errf(0, "samples", fmt.Sprintf("a row group of %d rows holds %d samples, more than %d per prompt (kernel scores compare every pair of samples)",
					rg.NumRows, md.NumValues, MaxSamplesPerRecord))
			}
		}
	}
	if total > decompressedLimit(size) {
		return bombError(s, size, fmt.Sprintf("columns %s declare %s uncompressed,", "id/samples/embeddings/...", fmtBytes(total)))
	}
	return nil
}

// checkParquetFooter checks the magic numbers and that the footer length
// fits in the file before parquet-go sees it: parquet-go allocates what
// the footer length says, so an 8-byte file could ask for gigabytes.
func checkParquetFooter(r io.ReaderAt, size int64) error {
	const magic = "PAR1"
	if size < 12 {
		return fmt.Errorf("%d bytes, shorter than the 12-byte minimum", size)
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return err
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(head[:4]) != magic || string(tail[4:]) != magic {
		return errors.New("missing the PAR1 magic number at the start or end")
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("footer length %d exceeds the file's %d bytes", n, size)
	}
	return nil
}
