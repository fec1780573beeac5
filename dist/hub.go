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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	Kind  string // "allreduce", "broadcast", "reducescatter", "allgather", "alltoall", "close"
	Op    Op
	Root  int
	DType array.DType
	Shape []int
	Data  []byte // .npy; FP8 travels as float16, which holds it exactly
	// Parts are an all-to-all's pieces, one .npy per rank; Shape is
	// then the pieces' shape beyond the first axis.
	Parts [][]byte
}

type reply struct {
	Err     string
	Timeout bool // Err is a rank that did not join or call in time
	Data    []byte
	Parts   [][]byte // an all-to-all's pieces for this rank, one per sender
}

type hub struct {
	ln      net.Listener
	token   string
	timeout time.Duration // 0: wait forever
}

// maxRanks bounds the ranks of a job, far above any host backend's use.
const maxRanks = 1 << 16

// EnvTimeout names the variable that sets how long the host backend's hub
// waits, once a rank has joined or called a collective, for the others,
// and how long a collective may run on GPUs before the watchdog aborts it.
const EnvTimeout = "GOCU_DIST_TIMEOUT"

// DefaultTimeout is the hub's wait without GOCU_DIST_TIMEOUT, as torch's
// default process-group timeout.
const DefaultTimeout = 10 * time.Minute

// envTimeout reads GOCU_DIST_TIMEOUT: a Go duration, or "off".
func envTimeout() (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv(EnvTimeout))
	switch v {
	case "":
		return DefaultTimeout, nil
	case "off", "0":
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("dist: %s=%q is not a duration such as 30s or 10m, or off", EnvTimeout, v)
	}
	return d, nil
}

// startHub listens on GOCU_DIST_HUB (default 127.0.0.1, any free port) and
// serves one job in the background.
func startHub() (ID, error) {
	timeout, err := envTimeout()
	if err != nil {
		return ID{}, err
	}
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
	h := &hub{ln: ln, token: hex.EncodeToString(tok[:]), timeout: timeout}
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
// Once the first rank has joined, the others have h.timeout to join.
func (h *hub) run() {
	var peers []*peer
	joined := 0
	for joined == 0 || joined < len(peers) {
		c, err := h.ln.Accept()
		if err != nil {
			h.ln.Close()
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				failAllTimeout(peers, fmt.Sprintf("%s of %d did not join within %v of the first (%s sets the limit)",
					missing(len(peers), func(r int) bool { return peers[r] != nil }), len(peers), h.timeout, EnvTimeout))
				return
			}
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
		case peers == nil && hi.NRanks > maxRanks:
			refuse(fmt.Sprintf("rank %d says %d ranks, more than the host backend's %d", hi.Rank, hi.NRanks, maxRanks))
			continue
		case peers == nil && hi.NRanks >= 1:
			peers = make([]*peer, hi.NRanks)
			if tl, ok := h.ln.(*net.TCPListener); ok && h.timeout > 0 {
				_ = tl.SetDeadline(time.Now().Add(h.timeout))
			}
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
	serve(peers, h.timeout)
}

// failAll tells every connected rank why the job cannot go on.
func failAll(peers []*peer, why string) { failWith(peers, reply{Err: why}) }

// failAllTimeout is failAll for ranks that did not join or call in time.
func failAllTimeout(peers []*peer, why string) { failWith(peers, reply{Err: why, Timeout: true}) }

func failWith(peers []*peer, rep reply) {
	for _, p := range peers {
		if p != nil {
			_ = p.conn.SetWriteDeadline(time.Now().Add(5 * time.Second)) // a stopped rank reads nothing
			_ = p.enc.Encode(rep)
			p.conn.Close()
		}
	}
}

// missing names the ranks of n for which have is false: "rank 2",
// "ranks 1, 3", or the first ones and a count.
func missing(n int, have func(int) bool) string {
	var rs []string
	count := 0
	for r := range n {
		if !have(r) {
			count++
			if len(rs) < 8 {
				rs = append(rs, strconv.Itoa(r))
			}
		}
	}
	switch {
	case count == 1:
		return "rank " + rs[0]
	case count > len(rs):
		return fmt.Sprintf("ranks %s and %d more", strings.Join(rs, ", "), count-len(rs))
	}
	return "ranks " + strings.Join(rs, ", ")
}

// arrival is one rank's next request, or why it cannot send one.
type arrival struct {
	rank int
	q    request
	err  error
}

// serve runs the collectives: a round ends when every rank has sent its
// request. Once one rank has called, the others have timeout to call; a
// rank that left is reported when the live ranks have called.
func serve(peers []*peer, timeout time.Duration) {
	n := len(peers)
	in := make(chan arrival, n)
	quit := make(chan struct{})
	defer close(quit)
	for r, p := range peers {
		go func() {
			for {
				// A rank sends its next request only after the reply
				// to its last one, so rounds never mix.
				var a arrival
				a.rank, a.err = r, p.dec.Decode(&a.q)
				select {
				case in <- a:
				case <-quit:
					return
				}
				if a.err != nil {
					return
				}
			}
		}()
	}
	reqs := make([]request, n)
	got := make([]bool, n)
	errs := make([]error, n)
	for {
		clear(got)
		count := 0
		var expiry <-chan time.Time
		var timer *time.Timer
		first := -1
		for count < n {
			select {
			case a := <-in:
				got[a.rank], reqs[a.rank], errs[a.rank] = true, a.q, a.err
				count++
				if a.err == nil && first < 0 {
					first = a.rank
					if timeout > 0 {
						timer = time.NewTimer(timeout)
						expiry = timer.C
					}
				}
			case <-expiry:
				failAllTimeout(peers, fmt.Sprintf("%s of %d did not call a collective within %v of rank %d's %s (stopped, hung or far behind? %s sets the limit)",
					missing(n, func(r int) bool { return got[r] }), n, timeout, first, reqs[first].describe(), EnvTimeout))
				return
			}
		}
		if timer != nil {
			timer.Stop()
		}
		for r, err := range errs {
			if err != nil {
				failAll(peers, fmt.Sprintf("rank %d left or failed (%v)", r, err))
				return
			}
		}
		rep := round(reqs)
		for r, p := range peers {
			_ = p.enc.Encode(replyFor(reqs, rep, r))
		}
		if reqs[0].Kind == "close" && rep.Err == "" {
			for _, p := range peers {
				p.conn.Close()
			}
			return
		}
	}
}

// replyFor is rank r's reply to a round: rep, or for an all-to-all the
// pieces the others sent it, as the hub only routes them.
func replyFor(reqs []request, rep reply, r int) reply {
	if rep.Err != "" || reqs[0].Kind != "alltoall" {
		return rep
	}
	parts := make([][]byte, len(reqs))
	for j, q := range reqs {
		parts[j] = q.Parts[r]
	}
	return reply{Parts: parts}
}

// round checks that the ranks called the same collective on the same
// shape and dtype, and computes it. The requests come from other
// processes: nothing in them is trusted (FuzzHubRound).
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
	case "alltoall":
		for r, o := range reqs {
			if len(o.Parts) != len(reqs) {
				return reply{Err: fmt.Sprintf("rank %d sent %d pieces for %d ranks", r, len(o.Parts), len(reqs))}
			}
		}
		return reply{}
	case "broadcast":
		if q.Root < 0 || q.Root >= len(reqs) {
			return reply{Err: fmt.Sprintf("broadcast from rank %d of %d", q.Root, len(reqs))}
		}
		return reply{Data: reqs[q.Root].Data}
	case "allreduce", "reducescatter", "allgather":
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
		var res *array.Array
		var err error
		if q.Kind == "allgather" {
			res, err = gather(xs) // every rank's, in rank order
		} else {
			res, err = reduce(xs, q.Op, len(xs)) // ranks take their parts
		}
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
	case "reducescatter":
		return fmt.Sprintf("ReduceScatter %v of %v %v", q.Op, q.DType, q.Shape)
	case "allgather":
		return fmt.Sprintf("AllGather of %v %v", q.DType, q.Shape)
	case "alltoall":
		return fmt.Sprintf("AllToAll of %v %s", q.DType, pieceShape(q.Shape))
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

	failed atomic.Pointer[error] // err, unless the comm was closed
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
		if rep.Timeout {
			return nil, fmt.Errorf("dist: Join: rank %d: %s: %w", rank, rep.Err, ErrTimeout)
		}
		return nil, fmt.Errorf("dist: Join: rank %d: %s: %w", rank, rep.Err, ErrPeer)
	}
	return &hostRemote{p: p, dev: dev, rank: rank}, nil
}

func (h *hostRemote) name() string { return "host" }

func (h *hostRemote) roundtrip(q request) ([]byte, error) {
	rep, err := h.call(q)
	return rep.Data, err
}

// call sends q to the hub and returns its reply.
func (h *hostRemote) call(q request) (reply, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return reply{}, h.err
	}
	var rep reply
	err := h.p.enc.Encode(q)
	if err == nil {
		err = h.p.dec.Decode(&rep)
	}
	if err != nil {
		return reply{}, h.fail(fmt.Errorf("dist: %s: rank %d: the connection to the hub failed (%v): %w", q.describe(), h.rank, err, ErrPeer))
	}
	if rep.Err != "" {
		if rep.Timeout {
			// The hub ended the job: later calls fail the same way.
			return reply{}, h.fail(fmt.Errorf("dist: %s: rank %d: %s: %w", q.describe(), h.rank, rep.Err, ErrTimeout))
		}
		return reply{}, fmt.Errorf("dist: %s: rank %d: %s: %w", q.describe(), h.rank, rep.Err, ErrPeer)
	}
	return rep, nil
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

func (h *hostRemote) reduceScatter(sends, recvs []*array.Array, op Op) error {
	x := sends[0]
	data, err := encodeNPY(x)
	if err != nil {
		return err
	}
	out, err := h.roundtrip(request{Kind: "reducescatter", Op: op, DType: x.DType(), Shape: x.Shape(), Data: data})
	if err != nil {
		return err
	}
	r, err := decodeNPY(array.On(x.Device()), out, x.DType())
	if err != nil {
		return err
	}
	defer r.Close()
	return scatterParts(recvs, r.Reshape(-1), func(int) int { return h.rank })
}

func (h *hostRemote) allGather(sends, recvs []*array.Array) error {
	x := sends[0]
	data, err := encodeNPY(x)
	if err != nil {
		return err
	}
	out, err := h.roundtrip(request{Kind: "allgather", DType: x.DType(), Shape: x.Shape(), Data: data})
	if err != nil {
		return err
	}
	y := recvs[0]
	r, err := decodeNPY(array.On(y.Device()), out, y.DType())
	if err != nil {
		return err
	}
	defer r.Close()
	return y.Assign(r.Reshape(y.Shape()...))
}

// allToAll sends the pieces through the hub, which routes them unread.
func (h *hostRemote) allToAll(sends [][]*array.Array) ([][]*array.Array, error) {
	ps := sends[0]
	q := request{Kind: "alltoall", DType: ps[0].DType(), Shape: ps[0].Shape()[1:], Parts: make([][]byte, len(ps))}
	for j, p := range ps {
		data, err := encodeNPY(p)
		if err != nil {
			return nil, err
		}
		q.Parts[j] = data
	}
	rep, err := h.call(q)
	if err != nil {
		return nil, err
	}
	if len(rep.Parts) != len(ps) {
		return nil, fmt.Errorf("dist: %s: rank %d: the hub sent %d pieces for %d ranks: %w", q.describe(), h.rank, len(rep.Parts), len(ps), ErrPeer)
	}
	out := make([]*array.Array, len(ps))
	for j, data := range rep.Parts {
		x, err := decodeNPY(array.On(h.dev), data, q.DType)
		if err != nil {
			return nil, fmt.Errorf("dist: %s: rank %d: the piece from rank %d: %w", q.describe(), h.rank, j, err)
		}
		out[j] = x
	}
	return [][]*array.Array{out}, nil
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

func (h *hostRemote) failure() error {
	if p := h.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// fail makes err sticky; h.mu is held.
func (h *hostRemote) fail(err error) error {
	h.err = err
	h.failed.Store(&err)
	h.p.conn.Close()
	return err
}

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
