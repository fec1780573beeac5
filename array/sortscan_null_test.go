package array

import "github.com/gocu-dev/gocu/array/internal/backend"

func (nullBackend) Sort(*backend.Sort) error           { return nil }
func (nullBackend) Scan(*backend.Scan) error           { return nil }
func (nullBackend) Search(*backend.Search) error       { return nil }
func (nullBackend) Histogram(*backend.Histogram) error { return nil }
func (nullBackend) Unique(*backend.Unique) error       { return nil }
func (nullBackend) TopK(*backend.TopK) error           { return nil }
