package array

import "github.com/gocu-dev/gocu/array/internal/backend"

// The poisoning test backend forwards the indexing requests.

func (p poisonBackend) Gather(g *backend.Gather) error {
	return p.Backend.(backend.Indexer).Gather(g)
}

func (p poisonBackend) Scatter(s *backend.Scatter) error {
	return p.Backend.(backend.Indexer).Scatter(s)
}

func (p poisonBackend) Nonzero(z *backend.Nonzero) error {
	return p.Backend.(backend.Indexer).Nonzero(z)
}
