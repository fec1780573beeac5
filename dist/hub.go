package dist

import (
	"bytes"
	"crypto/rand"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// The host backend across processes: the process that made the id runs a
// hub, every rank connects to it over TCP, and each collective is one
// round: every rank sends its array (as .npy bytes), the hub reduces them
// in rank order with the same code as the in-process host backend, and
// sends the result back. It is slow (all data crosses the hub) and meant
// for running and testing multi-process code without GPUs; NCCL is the
// real thing. Unlike NCCL it never hangs on a rank that failed: the others
// get ErrPeer.

type hello struct {
	Token        string
	NRanks, Rank int
}

type request struct {
	Kind  string // "allreduce", "broadcast", "close"
	Op    Op
	Root  int
	DType array.DType
	Shape []int
	Data  []byte // .npy; FP8 travels as float16, which holds it exactly
}

type reply struct {
	Err  string
	Data []byte
}

type hub struct {
	ln    net.Listener
	token string
}

// startHub listens on GOCU_DIST_HUB (default 127.0.0.1, any free port) and
// serves one job in the background.
func startHub() (ID, error) {
	addr := os.Getenv("GOCU_DIST_HUB")
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return ID{}, fmt.Errorf("dist: NewID: the host backend's hub: %w", err)
	}
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		ln.Close()
		return ID{}, err
	}
	h := &hub{ln: ln, token: hex.EncodeToString(tok[:])}
	adv := ln.Addr().String()
	if host, port, err := net.SplitHostPort(adv); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			if name, err := os.Hostname(); err == nil {
				adv = net.JoinHostPort(name, port)
			}
		}
	}
	go h.run()
	return ID{addr: adv, token: h.token}, nil
}

type peer struct {
	conn net.Conn
	enc  *gob.Encoder
	dec  *gob.Decoder
}

func newPeer(c net.Conn) *peer {
	return &peer{conn: c, enc: gob.NewEncoder(c), dec: gob.NewDecoder(c)}
}

// run admits the ranks, then serves their collectives until they close.
func (h *hub) run() {
	var peers []*peer
	joined := 0
	for joined == 0 || joined < len(peers) {
		c, err := h.ln.Accept()
		if err != nil {
			h.ln.Close()
			failAll(peers, "the hub stopped accepting: "+err.Error())
			return
		}
		p := newPeer(c)
		var hi hello
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		err = p.dec.Decode(&hi)
		_ = c.SetDeadline(time.Time{})
		refuse := func(why string) {
			_ = p.enc.Encode(reply{Err: why})
			c.Close()
		}
		switch {
		case err != nil:
			c.Close()
			continue
		case hi.Token != h.token:
			refuse("wrong token: the id is of another job")
			continue
		case peers == nil && hi.NRanks >= 1:
			peers = make([]*peer, hi.NRanks)
		}
		switch {
		case hi.NRanks != len(peers):
			refuse(fmt.Sprintf("rank %d says %d ranks, the first to join said %d", hi.Rank, hi.NRanks, len(peers)))
			continue
		case hi.Rank < 0 || hi.Rank >= len(peers):
			refuse(fmt.Sprintf("rank %d is out of range [0, %d)", hi.Rank, len(peers)))
			continue
		case peers[hi.Rank] != nil:
			refuse(fmt.Sprintf("rank %d joined twice", hi.Rank))
			continue
		}
		peers[hi.Rank] = p
		joined++
	}
	h.ln.Close()
	for _, p := range peers {
		_ = p.enc.Encode(reply{})
	}
	serve(peers)
}

// failAll tells every connected rank why the job cannot go on.
func failAll(peers []*peer, why string) {
	for _, p := range peers {
		if p != nil {
			_ = p.enc.Encode(reply{Err: why})
			p.conn.Close()
		}
	}
}

func serve(peers []*peer) {
	n := len(peers)
	reqs := make([]request, n)
	for {
		for r, p := range peers {
			reqs[r] = request{}
			if err := p.dec.Decode(&reqs[r]); err != nil {
				failAll(peers, fmt.Sprintf("rank %d left or failed (%v)", r, err))
				return
			}
		}
		rep := round(reqs)
		for _, p := range peers {
			_ = p.enc.Encode(rep)
		}
		if reqs[0].Kind == "close" && rep.Err == "" {
			for _, p := range peers {
				p.conn.Close()
			}
			return
		}
	}
}

// round checks that the ranks called the same collective on the same
// shape and dtype, and computes it.
func round(reqs []request) reply {
	q := reqs[0]
	for r, o := range reqs[1:] {
		if o.Kind != q.Kind || o.Op != q.Op || o.Root != q.Root || o.DType != q.DType || !slices.Equal(o.Shape, q.Shape) {
			for c, x := range reqs {
				if x.Kind == "close" {
					return reply{Err: fmt.Sprintf("rank %d left (closed the communicator) while the others called a collective", c)}
				}
			}
			return reply{Err: fmt.Sprintf("the ranks disagree: rank 0 called %s, rank %d %s", q.describe(), r+1, o.describe())}
		}
	}
	switch q.Kind {
	case "close":
		return reply{}
	case "broadcast":
		return reply{Data: reqs[q.Root].Data}
	case "allreduce":
		cpu := array.CPU()
		xs := make([]*array.Array, len(reqs))
		for r, o := range reqs {
			x, err := decodeNPY(cpu, o.Data, o.DType)
			if err != nil {
				return reply{Err: fmt.Sprintf("rank %d's array: %v", r, err)}
			}
			defer x.Close()
			xs[r] = x
		}
		res, err := reduce(xs, q.Op, len(xs))
		if err != nil {
			return reply{Err: err.Error()}
		}
		defer res.Close()
		data, err := encodeNPY(res)
		if err != nil {
			return reply{Err: err.Error()}
		}
		return reply{Data: data}
	}
	return reply{Err: "unknown request " + q.Kind}
}

func (q request) describe() string {
	switch q.Kind {
	case "close":
		return "Close"
	case "broadcast":
		return fmt.Sprintf("Broadcast from %d of %v %v", q.Root, q.DType, q.Shape)
	}
	return fmt.Sprintf("AllReduce %v of %v %v", q.Op, q.DType, q.Shape)
}

func isFloat8(dt array.DType) bool { return dt == array.Float8E4M3 || dt == array.Float8E5M2 }

// encodeNPY returns x as .npy bytes (the 8-bit floats as float16, exactly).
func encodeNPY(x *array.Array) ([]byte, error) {
	if isFloat8(x.DType()) {
		x = x.AsType(array.Float16)
		defer x.Close()
	}
	var b bytes.Buffer
	if err := x.WriteNPY(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeNPY reads .npy bytes as an array of dtype dt on d.
func decodeNPY(d *array.Maker, data []byte, dt array.DType) (*array.Array, error) {
	x, err := d.ReadNPY(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if x.DType() != dt {
		y := x.AsType(dt)
		x.Close()
		return y, y.Err()
	}
	return x, nil
}

// hostRemote is one rank of a host-backend communicator across processes.
type hostRemote struct {
	mu   sync.Mutex
	p    *peer
	dev  *gocu.Device
	rank int
	err  error // sticky: the hub failed or the comm was closed
}

func joinHub(id ID, nranks, rank int, dev *gocu.Device) (*hostRemote, error) {
	c, err := net.DialTimeout("tcp", id.addr, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dist: Join: the hub at %s: %w", id.addr, err)
	}
	p := newPeer(c)
	if err := p.enc.Encode(hello{Token: id.token, NRanks: nranks, Rank: rank}); err != nil {
		c.Close()
		return nil, fmt.Errorf("dist: Join: %w", err)
	}
	var rep reply
	if err := p.dec.Decode(&rep); err != nil {
		c.Close()
		return nil, fmt.Errorf("dist: Join: the hub at %s: %w", id.addr, err)
	}
	if rep.Err != "" {
		c.Close()
		return nil, fmt.Errorf("dist: Join: rank %d: %s: %w", rank, rep.Err, ErrPeer)
	}
	return &hostRemote{p: p, dev: dev, rank: rank}, nil
}

func (h *hostRemote) name() string { return "host" }

func (h *hostRemote) roundtrip(q request) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	var rep reply
	err := h.p.enc.Encode(q)
	if err == nil {
		err = h.p.dec.Decode(&rep)
	}
	if err != nil {
		h.err = fmt.Errorf("dist: %s: rank %d: the connection to the hub failed (%v): %w", q.describe(), h.rank, err, ErrPeer)
		h.p.conn.Close()
		return nil, h.err
	}
	if rep.Err != "" {
		return nil, fmt.Errorf("dist: %s: rank %d: %s: %w", q.describe(), h.rank, rep.Err, ErrPeer)
	}
	return rep.Data, nil
}

func (h *hostRemote) allReduce(xs []*array.Array, op Op) error {
	x := xs[0]
	data, err := encodeNPY(x)
	if err != nil {
		return err
	}
	out, err := h.roundtrip(request{Kind: "allreduce", Op: op, DType: x.DType(), Shape: x.Shape(), Data: data})
	if err != nil {
		return err
	}
	return assignNPY(x, out)
}

func (h *hostRemote) broadcast(xs []*array.Array, root int) error {
	x := xs[0]
	q := request{Kind: "broadcast", Root: root, DType: x.DType(), Shape: x.Shape()}
	if h.rank == root {
		data, err := encodeNPY(x)
		if err != nil {
			return err
		}
		q.Data = data
	}
	out, err := h.roundtrip(q)
	if err != nil || h.rank == root {
		return err
	}
	return assignNPY(x, out)
}

func assignNPY(x *array.Array, data []byte) error {
	r, err := decodeNPY(array.On(x.Device()), data, x.DType())
	if err != nil {
		return err
	}
	defer r.Close()
	return x.Assign(r)
}

func (h *hostRemote) group(fn func() error) error { return fn() }

func (h *hostRemote) close() error {
	_, err := h.roundtrip(request{Kind: "close"})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.err = fmt.Errorf("dist: rank %d: %w", h.rank, ErrClosed)
	}
	h.p.conn.Close()
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

func (h *hostRemote) abort() error {
	// Closing the connection ends a round trip in progress.
	h.p.conn.Close()
	return nil
}
