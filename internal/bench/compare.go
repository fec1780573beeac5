package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Comparison with another run: a report of gocu bench --json, or the
// baseline.json the anchors write (bench/anchors/baseline.py: a flat
// object of figures of torch and CuPy on the same workloads, which
// Workload.Peers map to).

// Baseline is the anchors' baseline.json: key -> figure. Non-numeric
// entries (the device name, error texts) are kept in Text.
type Baseline struct {
	Values map[string]float64
	Text   map[string]string
}

// ReadBaseline reads a baseline.json.
func ReadBaseline(r io.Reader) (*Baseline, error) {
	var raw map[string]any
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("bench: not a baseline.json: %w", err)
	}
	b := &Baseline{Values: map[string]float64{}, Text: map[string]string{}}
	for k, v := range raw {
		switch v := v.(type) {
		case float64:
			b.Values[k] = v
		case string:
			b.Text[k] = v
		}
	}
	return b, nil
}

// speed returns how many times faster x is than a peer's figure v.
func speed(x *Result, m Metric, v float64) float64 {
	if v <= 0 || x.Seconds <= 0 {
		return 0
	}
	switch m {
	case Millis:
		return v / 1e3 / x.Seconds
	case MicrosPerOp:
		return v / 1e6 / x.secondsPerOp()
	case MillisPerOp:
		return v / 1e3 / x.secondsPerOp()
	case GBps:
		return x.GBps / v
	case TFLOPs:
		return x.TFLOPs / v
	case Seconds:
		return v / x.Seconds
	}
	return 0
}

// CompareBaseline fills in each result's Peers from the baseline. Results
// of small runs are not compared: their sizes differ from the peers'.
func (r *Report) CompareBaseline(b *Baseline, name string) {
	if r.Small {
		return
	}
	for i := range r.Results {
		x := &r.Results[i]
		w := lookup(x.Name, r.Device.Kind)
		if w == nil || x.Error != "" || x.Skipped != "" {
			continue
		}
		x.Peers = nil
		for _, p := range w.Peers {
			v, ok := b.Values[p.Key]
			if !ok {
				continue
			}
			if s := speed(x, p.Metric, v); s > 0 {
				x.Peers = append(x.Peers, PeerResult{Name: p.Name, Key: p.Key, Value: v, Speed: s})
			}
		}
	}
	if d := b.Text["device"]; d != "" {
		name += " (" + d + ")"
	}
	r.Compared = name
}

// CompareReport sets each result's Versus to its speed relative to the
// same workload on the same kind of device in a saved report.
func (r *Report) CompareReport(old *Report, name string) {
	for i := range r.Results {
		x := &r.Results[i]
		if old.Device.Kind != r.Device.Kind || x.Seconds <= 0 {
			continue
		}
		if y := old.Result(x.Name); y != nil && y.Seconds > 0 && y.Error == "" {
			x.Versus = y.secondsPerOp() / x.secondsPerOp()
		}
	}
	r.Compared = name
}

// Compare reads path, a saved report or a baseline.json, and compares r
// with it.
func (r *Report) Compare(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	name := filepath.Base(path)
	var probe struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("bench: --compare %s: not JSON: %w", path, err)
	}
	if probe.Schema != "" {
		old, err := ReadReport(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("bench: --compare %s: %w", path, err)
		}
		if old.Device.Kind != r.Device.Kind {
			return fmt.Errorf("bench: --compare %s: that run is on %s, this one on %s", path, old.Device.Kind, r.Device.Kind)
		}
		r.CompareReport(old, name)
		return nil
	}
	b, err := ReadBaseline(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("bench: --compare %s: %w", path, err)
	}
	if len(b.Values) == 0 {
		return fmt.Errorf("bench: --compare %s: neither a gocu bench report nor a baseline.json with figures", path)
	}
	r.CompareBaseline(b, name)
	return nil
}

// lookup returns the registered workload of that name on the device kind.
func lookup(name, kind string) *Workload {
	d, err := ParseDevice(kind)
	if err != nil {
		return nil
	}
	return find(Workloads(d), name)
}
