package dist

import (
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/nccl"
)

// ID is what the ranks of a multi-process communicator share to find each
// other (Join): NCCL's unique id for GPUs, or the address of the host
// backend's hub and a random token for the CPU. One process makes it with
// NewID and passes its text form (String) to the others out of band, in an
// environment variable, a file or a key-value store.
//
// The process that made it must stay alive: NCCL's id holds the address
// where it listens until every rank has joined; the host backend's hub
// runs there for the whole job and relays every collective.
type ID struct {
	ncclID *nccl.UniqueID
	addr   string // host backend: the hub's host:port
	token  string
}

// NewID makes an id for ranks on devices of the given kind: gocu.CUDA
// asks NCCL (ncclGetUniqueId: it needs libnccl, not a GPU); gocu.CPU and
// gocu.Sim start the host backend's hub in this process, listening on
// GOCU_DIST_HUB (host:port; default 127.0.0.1 and a free port: set it to
// an address the other hosts reach to span hosts).
func NewID(kind gocu.Kind) (ID, error) {
	switch kind {
	case gocu.CUDA:
		id, err := nccl.NewUniqueID()
		if err != nil {
			return ID{}, fmt.Errorf("dist: NewID: %w", err)
		}
		return ID{ncclID: &id}, nil
	case gocu.CPU, gocu.Sim:
		return startHub()
	}
	return ID{}, fmt.Errorf("dist: NewID: unknown device kind %v", kind)
}

// String returns the text form: "nccl:" and 256 hexadecimal digits, or
// "host:" and the hub's address and token.
func (id ID) String() string {
	switch {
	case id.ncclID != nil:
		return "nccl:" + id.ncclID.String()
	case id.addr != "":
		return "host:" + id.addr + "/" + id.token
	}
	return ""
}

// MarshalText returns String's text.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText parses the text form.
func (id *ID) UnmarshalText(text []byte) error {
	v, err := ParseID(string(text))
	if err == nil {
		*id = v
	}
	return err
}

// ParseID parses the text form of an ID.
func ParseID(s string) (ID, error) {
	kind, rest, ok := strings.Cut(strings.TrimSpace(s), ":")
	switch {
	case ok && kind == "nccl":
		u, err := nccl.ParseUniqueID(rest)
		if err != nil {
			return ID{}, fmt.Errorf("dist: id: %w", err)
		}
		return ID{ncclID: &u}, nil
	case ok && kind == "host":
		addr, token, ok := strings.Cut(rest, "/")
		if ok && addr != "" && token != "" {
			return ID{addr: addr, token: token}, nil
		}
	}
	return ID{}, fmt.Errorf("dist: %q is not an id: want nccl:<256 hex digits> or host:<host:port>/<token>", short(s))
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
