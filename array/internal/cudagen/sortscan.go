package cudagen

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Sorting, scans, searching and counting. These kernels are written by
// hand for the hardware and specialised only by dtype (and operation):
//
//   - Sort is a stable LSD radix sort, 8 bits a pass, in the manner of
//     Adinets and Merrill's onesweep. One kernel (ghist) maps the keys to
//     unsigned integers whose order is the sort's and counts the digits of
//     every pass; plan turns the counts into each digit's first position
//     and marks the passes whose digit is the same in every key, to skip.
//     Each pass is then one kernel: a tile ranks its keys stably (warps
//     with __match_any_sync), publishes its digit counts, looks back over
//     the tiles before it for each digit's offset (decoupled look-back)
//     and writes its keys grouped by digit through shared memory. Rows
//     are sorted together, the row as the most significant digits, which
//     the position each key carries gives. The last pass writes the keys,
//     positions or payload gathered by position (finish does when every
//     pass is skipped). A sort of one row that wants only the keys
//     carries no positions (null pointers).
//   - The scan is single-pass with decoupled look-back (Merrill and
//     Garland): tiles take ids in launch order, publish their aggregate,
//     and add the prefixes of their predecessors in the same row, which
//     one warp reads 32 at a time. Along an
//     inner axis, a thread scans each column (coalesced across columns).
//   - Search is a binary search per value; Histogram counts in shared
//     memory per block when the bins fit; Unique flags the first of each
//     run of a sorted vector, scans the flags and scatters.
//
// Every parameter travels as 8 bytes (pointers, long long, double).

// Block and tile sizes of these kernels.
const (
	SortBlock = 256
	SortIPT   = 16
	SortTile  = SortBlock * SortIPT
	ScanBlock = 256
	// HistShared is the most bins counted in shared memory.
	HistShared = 4096
)

var ssKernels sync.Map // key -> any

func ssMemo[T any](key string, mk func() T) T {
	if v, ok := ssKernels.Load(key); ok {
		return v.(T)
	}
	v, _ := ssKernels.LoadOrStore(key, mk())
	return v.(T)
}

func ssKernel(src, name string, block int) *Kernel {
	return &Kernel{Name: name, Source: src, Block: block, Grid: GridStride}
}

// SortSet is the kernels of one radix sort specialisation.
type SortSet struct {
	GHist, Plan, Pass, Finish *Kernel
	// RHist and RPlan replace GHist and Plan in a segmented sort, which
	// sorts each row alone (tiles do not cross rows).
	RHist, RPlan *Kernel
}

// keyUnsigned is the unsigned type a sort key maps to.
func keyUnsigned(d backend.DType) string {
	if d.Size() == 8 {
		return "unsigned long long"
	}
	return "unsigned int"
}

// payloadType is the type that moves a payload of size bytes.
func payloadType(size int) string {
	switch size {
	case 1:
		return "unsigned char"
	case 2:
		return "unsigned short"
	case 4:
		return "unsigned int"
	}
	return "unsigned long long"
}

func keyFuncs(d backend.DType) string {
	switch d {
	case backend.Float32:
		return `static __device__ __forceinline__ UK ss_key(KT v) {
	if (v != v) return 0xffffffffu;
	unsigned int u = (unsigned int)__float_as_int(v);
	return (u >> 31) ? ~u : (u | 0x80000000u);
}
static __device__ __forceinline__ KT ss_unkey(UK u) {
	if (u == 0xffffffffu) return __int_as_float(0x7fc00000);
	return __int_as_float((int)((u >> 31) ? (u ^ 0x80000000u) : ~u));
}
`
	case backend.Float64:
		return `static __device__ __forceinline__ UK ss_key(KT v) {
	if (v != v) return 0xffffffffffffffffull;
	unsigned long long u = (unsigned long long)__double_as_longlong(v);
	return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}
static __device__ __forceinline__ KT ss_unkey(UK u) {
	if (u == 0xffffffffffffffffull) return __longlong_as_double(0x7ff8000000000000ll);
	return __longlong_as_double((long long)((u >> 63) ? (u ^ 0x8000000000000000ull) : ~u));
}
`
	case backend.Int32:
		return `static __device__ __forceinline__ UK ss_key(KT v) { return (unsigned int)v ^ 0x80000000u; }
static __device__ __forceinline__ KT ss_unkey(UK u) { return (int)(u ^ 0x80000000u); }
`
	case backend.Int64:
		return `static __device__ __forceinline__ UK ss_key(KT v) { return (unsigned long long)v ^ 0x8000000000000000ull; }
static __device__ __forceinline__ KT ss_unkey(UK u) { return (long long)(u ^ 0x8000000000000000ull); }
`
	case backend.Bool:
		return `static __device__ __forceinline__ UK ss_key(KT v) { return v ? 1u : 0u; }
static __device__ __forceinline__ KT ss_unkey(UK u) { return u != 0u; }
`
	}
	return `static __device__ __forceinline__ UK ss_key(KT v) { return (UK)v; }
static __device__ __forceinline__ KT ss_unkey(UK u) { return (KT)u; }
`
}

// SortKernels returns the radix sort kernels for keys of dtype key and a
// payload of valSize bytes (1, 2, 4 or 8). Wide sorts (of 2^30 elements
// or more) keep 64-bit look-back statuses, the others 32-bit ones.
func SortKernels(key backend.DType, valSize int, wide bool) SortSet {
	spec := fmt.Sprintf("sort5|%v|%d|%v", key, valSize, wide)
	return ssMemo(spec, func() SortSet {
		name := kernelName("sort", spec)
		var b strings.Builder
		fmt.Fprintf(&b, "typedef %s KT;\ntypedef %s UK;\ntypedef %s VT;\ntypedef unsigned int POS;\n", ctype(key), keyUnsigned(key), payloadType(valSize))
		fmt.Fprintf(&b, "#define BLOCK %d\n#define IPT %d\n#define TILE %d\n#define WIDE %d\n#define NKEY %d\n", SortBlock, SortIPT, SortTile, flag01(wide), key.Size())
		b.WriteString(keyFuncs(key))
		b.WriteString(lookbackHooks)
		b.WriteString(strings.ReplaceAll(sortBody, "NAME", name))
		src := b.String()
		return SortSet{
			GHist:  ssKernel(src, name+"_ghist", SortBlock),
			Plan:   ssKernel(src, name+"_plan", 256),
			Pass:   ssKernel(src, name+"_pass", SortBlock),
			Finish: ssKernel(src, name+"_finish", SortBlock),
			RHist:  ssKernel(src, name+"_rhist", SortBlock),
			RPlan:  ssKernel(src, name+"_rplan", 256),
		}
	})
}

// SortPasses is the most radix passes of a sort: 8 key bytes and 4 bytes
// of the row.
const SortPasses = 12

const sortBody = `
static __device__ __forceinline__ unsigned int ss_digit(UK k, POS p, long long shift, long long byRow, long long len) {
	if (byRow) return (unsigned int)(((unsigned long long)p / (unsigned long long)len) >> shift) & 255u;
	return (unsigned int)(k >> shift) & 255u;
}

// ctl[pass] is 1 for a pass to skip (every key has the same digit there:
// the pass would not move anything), ctl[SORT_SRC + pass] which buffer
// (0 or 1) the pass reads, ctl[SORT_FIRST] the first pass that runs, which
// reads the input keys, and ctl[SORT_LAST] the last, which writes the
// results (-1 for none); plan writes them.
#define SORT_SRC 16
#define SORT_FIRST 30
#define SORT_LAST 31
#define NPASS 12
#define UNROLL 4

// ss_inrow is the position in its row of position p: no division in the
// first row (a sort of one row).
static __device__ __forceinline__ unsigned long long ss_inrow(POS p, long long len) {
	return (long long)p < len ? (unsigned long long)p : (unsigned long long)p % (unsigned long long)len;
}

// ss_count adds 1 to h[v] for each lane where ok, with one atomic when
// every such lane has the same v: keys often share their high bytes, and
// 32 atomics on one word would run one after another. Every lane calls it.
static __device__ __forceinline__ void ss_count(unsigned int* h, unsigned int v, bool ok) {
	const unsigned int any = __ballot_sync(0xffffffffu, ok);
	const int leader = any ? __ffs((int)any) - 1 : 0;
	const unsigned int v0 = __shfl_sync(0xffffffffu, v, leader);
	if (__all_sync(0xffffffffu, !ok || v == v0)) {
		if (any && (int)(threadIdx.x & 31) == leader) atomicAdd(&h[v0], (unsigned int)__popc(any));
	} else if (ok) {
		atomicAdd(&h[v], 1u);
	}
}

// ghist counts the digits of every pass at once, of the keys mapped to
// unsigned integers whose order is the sort's: the key bytes, then the
// bytes of the row of each position (rpass of them).
extern "C" __global__ void __launch_bounds__(BLOCK) NAME_ghist(const KT* __restrict__ in, long long n, long long desc,
		unsigned int* __restrict__ ghist, long long len, long long rpass) {
	__shared__ unsigned int h[NPASS][256];
	for (int d = threadIdx.x; d < NPASS * 256; d += BLOCK) (&h[0][0])[d] = 0u;
	__syncthreads();
	// UNROLL loads in flight a thread: the loop is bound by memory latency.
	// The loops run while the warp's first lane has work (ss_count).
	const long long stride = (long long)gridDim.x * BLOCK;
	const int lane = threadIdx.x & 31;
	for (long long i0 = (long long)blockIdx.x * BLOCK + threadIdx.x; i0 - lane < n; i0 += UNROLL * stride) {
		KT v[UNROLL];
		for (int u = 0; u < UNROLL; u++) {
			const long long i = i0 + u * stride;
			if (i < n) v[u] = in[i];
		}
		for (int u = 0; u < UNROLL; u++) {
			const long long i = i0 + u * stride;
			if (i - lane >= n) break;
			const bool ok = i < n;
			UK k = ok ? ss_key(v[u]) : (UK)0;
			if (desc) k = (UK)~k;
			for (int b = 0; b < NKEY; b++) ss_count(h[b], (unsigned int)(k >> (8 * b)) & 255u, ok);
			if (rpass) {
				const unsigned long long r = ok ? (unsigned long long)i / (unsigned long long)len : 0ull;
				for (int b = 0; b < rpass; b++) ss_count(h[NKEY + b], (unsigned int)(r >> (8 * b)) & 255u, ok);
			}
		}
	}
	__syncthreads();
	for (int d = threadIdx.x; d < (NKEY + rpass) * 256; d += BLOCK) {
		const unsigned int c = (&h[0][0])[d];
		if (c) atomicAdd(&ghist[d], c);
	}
}

// plan (one block of 256 threads) marks the passes to skip, chooses the
// buffers and turns each pass's digit counts into the digits' first
// positions, goff.
extern "C" __global__ void __launch_bounds__(256) NAME_plan(const unsigned int* __restrict__ ghist, long long n, long long npass, int* __restrict__ ctl, unsigned int* __restrict__ goff) {
	__shared__ unsigned int wsum[8];
	__shared__ int skip;
	const int d = threadIdx.x, lane = d & 31, warp = d >> 5;
	int cur = 0, first = -1, last = -1;
	for (long long p = 0; p < npass; p++) {
		if (d == 0) skip = 0;
		__syncthreads();
		const unsigned int c = ghist[p * 256 + d];
		if ((long long)c == n) skip = 1;
		unsigned int inc = c;
		for (int o = 1; o < 32; o <<= 1) {
			const unsigned int y = __shfl_up_sync(0xffffffffu, inc, o);
			if (lane >= o) inc += y;
		}
		if (lane == 31) wsum[warp] = inc;
		__syncthreads();
		unsigned int pre = 0u;
		for (int w = 0; w < warp; w++) pre += wsum[w];
		goff[p * 256 + d] = pre + inc - c;
		if (d == 0) {
			ctl[p] = skip;
			ctl[SORT_SRC + p] = cur;
		}
		if (!skip) {
			cur ^= 1;
			if (first < 0) first = (int)p;
			last = (int)p;
		}
		__syncthreads();
	}
	if (d == 0) {
		ctl[SORT_SRC + npass] = cur;
		ctl[SORT_FIRST] = first;
		ctl[SORT_LAST] = last;
	}
}

#if WIDE
typedef unsigned long long ST;
#define ST_SHIFT 62
static __device__ __forceinline__ void ss_store_st(ST* p, ST v) { SS_STORE_STATUS(p, v); }
#else
typedef unsigned int ST;
#define ST_SHIFT 30
static __device__ __forceinline__ void ss_store_st(ST* p, ST v) { SS_STORE_STATUS32(p, v); }
#endif
#define ST_A ((ST)1 << ST_SHIFT)
#define ST_P ((ST)2 << ST_SHIFT)
#define ST_MASK (ST_A - 1)
#define LBW 8

union ss_stage {
	UK k[TILE];
	POS p[TILE];
};

// pass is one onesweep radix pass: a tile (its id from a ticket) ranks its
// keys by digit, stably (warps rank with __match_any_sync, in key order),
// publishes its digit counts and looks back, digit by digit, over the
// tiles before it (decoupled look-back), then writes its keys grouped by
// digit through shared memory, so that runs of a digit go out together.
// Statuses alternate between st0 and st1 with the source buffer; a pass
// clears the other one for the next pass (st0 is clear at the start, and
// the ticket sits after the statuses). The first pass maps the input keys
// as it loads them (their positions are their indices); the last writes
// the results as finish would.
extern "C" __global__ void __launch_bounds__(BLOCK) NAME_pass(const KT* __restrict__ in, UK* k0, UK* k1, POS* p0, POS* p1, const unsigned int* __restrict__ goff, ST* st0, ST* st1,
		long long n, long long shift, long long byRow, long long len, const int* __restrict__ ctl, long long pass, long long nb,
		KT* __restrict__ outk, long long* __restrict__ outp, const VT* __restrict__ vals, VT* __restrict__ outv, long long desc,
		long long tpr, long long gstride) {
	if (ctl[pass]) return;
	const bool fin = ctl[SORT_LAST] == (int)pass, raw = ctl[SORT_FIRST] == (int)pass;
	const int src = ctl[SORT_SRC + pass];
	const UK* __restrict__ keys = src ? k1 : k0;
	const POS* __restrict__ pos = src ? p1 : p0;
	UK* __restrict__ okeys = src ? k0 : k1;
	POS* __restrict__ opos = src ? p0 : p1;
	ST* st = src ? st1 : st0;
	ST* other = src ? st0 : st1;
	__shared__ unsigned int wh[BLOCK / 32][256];
	__shared__ unsigned int dbase[256]; // global position of the tile's first key of each digit, less its rank
	__shared__ unsigned int wsum[BLOCK / 32];
	__shared__ union ss_stage stage;
	__shared__ unsigned char sdig[TILE];
	__shared__ long long ticket;
	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	if (tid == 0) ticket = (long long)atomicAdd((unsigned int*)&st[nb * 256], 1u);
	for (int d = tid; d < 256 * (BLOCK / 32); d += BLOCK) (&wh[0][0])[d] = 0u;
	__syncthreads();
	const long long t = ticket;
	for (int d = tid; d < 256; d += BLOCK) other[t * 256 + d] = (ST)0;
	if (t == 0 && tid == 0) other[nb * 256] = (ST)0;
	// Segmented (tpr > 0): each row is sorted alone, in tpr tiles, and goff
	// holds the first positions of each row's digits, gstride apart.
	long long tr = t, tbase = t * TILE, cnt = n - tbase < TILE ? n - tbase : TILE;
	const unsigned int* __restrict__ go = goff + pass * 256;
	if (tpr) {
		const long long row = t / tpr;
		tr = t % tpr;
		tbase = row * len + tr * TILE;
		cnt = len - tr * TILE < TILE ? len - tr * TILE : TILE;
		go += row * gstride;
	}
	const long long end = tbase + cnt;
	const long long base = tbase + (long long)warp * (32 * IPT);
	const unsigned int lt = (1u << lane) - 1u;
	UK k[IPT];
	POS p[IPT];
	unsigned int r[IPT], dg[IPT];
	for (int j = 0; j < IPT; j++) {
		const long long i = base + j * 32 + lane;
		const bool ok = i < end;
		k[j] = 0;
		p[j] = 0;
		dg[j] = 256u;
		if (ok) {
			if (raw) {
				k[j] = ss_key(in[i]);
				if (desc) k[j] = (UK)~k[j];
				p[j] = (POS)i;
			} else {
				k[j] = keys[i];
				if (pos) p[j] = pos[i];
			}
			dg[j] = ss_digit(k[j], p[j], shift, byRow, len);
		}
	}
	for (int j = 0; j < IPT; j++) {
		const unsigned int peers = __match_any_sync(0xffffffffu, dg[j]);
		const unsigned int c = dg[j] < 256u ? wh[warp][dg[j]] : 0u;
		r[j] = c + __popc(peers & lt);
		__syncwarp();
		if (dg[j] < 256u && (peers & lt) == 0u) wh[warp][dg[j]] = c + __popc(peers);
		__syncwarp();
	}
	__syncthreads();
	// Thread d: the digit's count in the tile, the warps' offsets within
	// it, and its exclusive prefix over the digits (a block scan).
	const int d = tid;
	unsigned int cd = 0u;
	if (d < 256) {
		for (int w = 0; w < BLOCK / 32; w++) {
			const unsigned int x = wh[w][d];
			wh[w][d] = cd;
			cd += x;
		}
		ss_store_st(&st[t * 256 + d], (tr == 0 ? ST_P : ST_A) | (ST)cd);
	}
	unsigned int inc = cd;
	for (int o = 1; o < 32; o <<= 1) {
		const unsigned int y = __shfl_up_sync(0xffffffffu, inc, o);
		if (lane >= o) inc += y;
	}
	if (lane == 31) wsum[warp] = inc;
	__syncthreads();
	unsigned int dpre = inc - cd;
	for (int w = 0; w < warp; w++) dpre += wsum[w];
	if (d < 256) {
		// The keys of digit d in the tiles before this one, LBW statuses
		// read at once: a walk of one load at a time is bound by latency.
		ST run = 0;
		if (tr > 0) { // the row's first tile is always complete
			const long long first = t - tr;
			for (long long j = t - 1;; j -= LBW) {
				ST s[LBW];
				for (int w = 0; w < LBW; w++) s[w] = j - w >= first ? ((volatile ST*)st)[(j - w) * 256 + d] : ST_P;
				bool done = false;
				for (int w = 0; w < LBW && !done; w++) {
					while (!(s[w] & (ST_A | ST_P))) {
						SS_SPIN(&st[(j - w) * 256 + d]);
						s[w] = ((volatile ST*)st)[(j - w) * 256 + d];
					}
					run += s[w] & ST_MASK;
					done = (s[w] & ST_P) != 0;
				}
				if (done) break;
			}
			ss_store_st(&st[t * 256 + d], ST_P | (run + (ST)cd));
		}
		dbase[d] = go[d] + (unsigned int)run - dpre;
		for (int w = 0; w < BLOCK / 32; w++) wh[w][d] += dpre;
	}
	__syncthreads();
	// Keys (and digits) to their rank in the tile, then out in rank order.
	for (int j = 0; j < IPT; j++) {
		if (dg[j] < 256u) {
			const unsigned int q = wh[warp][dg[j]] + r[j];
			stage.k[q] = k[j];
			sdig[q] = (unsigned char)dg[j];
		}
	}
	__syncthreads();
	if (!fin) {
		for (int j = 0; j < IPT; j++) {
			const int q = j * BLOCK + tid;
			if (q < cnt) okeys[dbase[sdig[q]] + q] = stage.k[q];
		}
	} else if (outk) {
		for (int j = 0; j < IPT; j++) {
			const int q = j * BLOCK + tid;
			if (q < cnt) {
				const UK key = stage.k[q];
				outk[dbase[sdig[q]] + q] = ss_unkey(desc ? (UK)~key : key);
			}
		}
	}
	if (fin ? !(outp || outv) : !opos) return;
	__syncthreads();
	for (int j = 0; j < IPT; j++) {
		if (dg[j] < 256u) stage.p[wh[warp][dg[j]] + r[j]] = p[j];
	}
	__syncthreads();
	for (int j = 0; j < IPT; j++) {
		const int q = j * BLOCK + tid;
		if (q >= cnt) continue;
		const unsigned int dst = dbase[sdig[q]] + q;
		const POS pq = stage.p[q];
		if (!fin) {
			opos[dst] = pq;
			continue;
		}
		if (outp) outp[dst] = (long long)ss_inrow(pq, len);
		if (outv) outv[dst] = vals[pq];
	}
}

// rhist is ghist for a segmented sort: block b counts chunk
// b % cpr of row b / cpr (chunks of clen keys) into rhist[row][byte][digit].
extern "C" __global__ void __launch_bounds__(BLOCK) NAME_rhist(const KT* __restrict__ in, long long len, long long desc,
		unsigned int* __restrict__ rhist, long long cpr, long long clen) {
	__shared__ unsigned int h[NKEY][256];
	for (int d = threadIdx.x; d < NKEY * 256; d += BLOCK) (&h[0][0])[d] = 0u;
	__syncthreads();
	const long long row = blockIdx.x / cpr, c = blockIdx.x % cpr;
	const long long lo = row * len + c * clen;
	const long long hi = lo + (len - c * clen < clen ? len - c * clen : clen);
	const int lane = threadIdx.x & 31;
	for (long long i0 = lo + threadIdx.x; i0 - lane < hi; i0 += UNROLL * BLOCK) {
		KT v[UNROLL];
		for (int u = 0; u < UNROLL; u++) {
			const long long i = i0 + u * BLOCK;
			if (i < hi) v[u] = in[i];
		}
		for (int u = 0; u < UNROLL; u++) {
			const long long i = i0 + u * BLOCK;
			if (i - lane >= hi) break;
			const bool ok = i < hi;
			UK k = ok ? ss_key(v[u]) : (UK)0;
			if (desc) k = (UK)~k;
			for (int b = 0; b < NKEY; b++) ss_count(h[b], (unsigned int)(k >> (8 * b)) & 255u, ok);
		}
	}
	__syncthreads();
	for (int d = threadIdx.x; d < NKEY * 256; d += BLOCK) {
		const unsigned int x = (&h[0][0])[d];
		if (x) atomicAdd(&rhist[row * NKEY * 256 + d], x);
	}
}

// rplan (a block of 256 threads a row) turns each row's digit counts into
// the digits' first positions (in place); block 0 writes the plan: every
// pass runs.
extern "C" __global__ void __launch_bounds__(256) NAME_rplan(unsigned int* __restrict__ rhist, long long len, int* __restrict__ ctl) {
	__shared__ unsigned int wsum[NKEY][8];
	const int d = threadIdx.x, lane = d & 31, warp = d >> 5;
	const long long row = blockIdx.x;
	unsigned int c[NKEY], inc[NKEY];
	for (int b = 0; b < NKEY; b++) {
		c[b] = rhist[(row * NKEY + b) * 256 + d];
		inc[b] = c[b];
		for (int o = 1; o < 32; o <<= 1) {
			const unsigned int y = __shfl_up_sync(0xffffffffu, inc[b], o);
			if (lane >= o) inc[b] += y;
		}
		if (lane == 31) wsum[b][warp] = inc[b];
	}
	__syncthreads();
	for (int b = 0; b < NKEY; b++) {
		unsigned int pre = (unsigned int)(row * len);
		for (int w = 0; w < warp; w++) pre += wsum[b][w];
		rhist[(row * NKEY + b) * 256 + d] = pre + inc[b] - c[b];
	}
	if (row == 0 && d == 0) {
		for (int p = 0; p < NKEY; p++) {
			ctl[p] = 0;
			ctl[SORT_SRC + p] = p & 1;
		}
		ctl[SORT_SRC + NKEY] = NKEY & 1;
		ctl[SORT_FIRST] = 0;
		ctl[SORT_LAST] = NKEY - 1;
	}
}

// finish writes the results when no pass runs: every key is the same in
// every digit, so the input is in order.
extern "C" __global__ void __launch_bounds__(BLOCK) NAME_finish(const KT* __restrict__ in, KT* __restrict__ outk, long long* __restrict__ outp,
		const VT* __restrict__ vals, VT* __restrict__ outv, long long n, long long len, const int* __restrict__ ctl) {
	if (ctl[SORT_LAST] >= 0) return; // the last pass wrote the results
	for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += (long long)gridDim.x * BLOCK) {
		if (outk) outk[i] = ss_unkey(ss_key(in[i])); // NaN as the quiet NaN
		if (outp) outp[i] = (long long)ss_inrow((POS)i, len);
		if (outv) outv[i] = vals[i];
	}
}
`

// ScanSet is the kernels of one scan specialisation.
type ScanSet struct {
	Rows, Cols *Kernel
	// Tile is the number of elements a block of Rows scans.
	Tile int
	// Packed is set when a tile's status is one 64-bit word (flag and
	// value); otherwise the values sit in an auxiliary array of 2 per tile.
	Packed bool
}

// scanIPT is the items a thread of the row scan holds: 64 bytes of 4-byte
// types, 16 of bytes, 8 of 8-byte types.
func scanIPT(d backend.DType) int {
	if d.Size() == 8 {
		return 8
	}
	return 16
}

// scanOps defines SS_OP and SS_ID (the identity) for a scan.
func scanOps(d backend.DType, k backend.ScanKind) string {
	ut := map[backend.DType]string{backend.Uint8: "unsigned char", backend.Int32: "unsigned int", backend.Int64: "unsigned long long"}[d]
	lo := map[backend.DType]string{backend.Uint8: "0", backend.Int32: "(-2147483647 - 1)", backend.Int64: "(-9223372036854775807ll - 1)",
		backend.Float32: "__int_as_float(0xff800000)", backend.Float64: "__longlong_as_double(0xfff0000000000000ll)"}[d]
	hi := map[backend.DType]string{backend.Uint8: "255", backend.Int32: "2147483647", backend.Int64: "9223372036854775807ll",
		backend.Float32: "__int_as_float(0x7f800000)", backend.Float64: "__longlong_as_double(0x7ff0000000000000ll)"}[d]
	// -0 is the exact identity of a float sum: -0 + x is x for every x.
	zero := map[backend.DType]string{backend.Float32: "__int_as_float(0x80000000)", backend.Float64: "__longlong_as_double((long long)0x8000000000000000ull)"}[d]
	if zero == "" {
		zero = "0"
	}
	switch k {
	case backend.CumSum:
		if ut != "" {
			return fmt.Sprintf("static __device__ __forceinline__ T ss_op(T a, T b) { return (T)((%[1]s)a + (%[1]s)b); }\n#define SS_ID ((T)0)\n", ut)
		}
		return "static __device__ __forceinline__ T ss_op(T a, T b) { return a + b; }\n#define SS_ID (" + zero + ")\n"
	case backend.CumProd:
		if ut != "" {
			return fmt.Sprintf("static __device__ __forceinline__ T ss_op(T a, T b) { return (T)((%[1]s)a * (%[1]s)b); }\n#define SS_ID ((T)1)\n", ut)
		}
		return "static __device__ __forceinline__ T ss_op(T a, T b) { return a * b; }\n#define SS_ID ((T)1)\n"
	case backend.CumMax:
		if !d.IsFloat() {
			return "static __device__ __forceinline__ T ss_op(T a, T b) { return a >= b ? a : b; }\n#define SS_ID (" + lo + ")\n"
		}
		return "static __device__ __forceinline__ T ss_op(T a, T b) { return (a != a || a >= b) ? a : b; }\n#define SS_ID (" + lo + ")\n"
	}
	if !d.IsFloat() {
		return "static __device__ __forceinline__ T ss_op(T a, T b) { return a <= b ? a : b; }\n#define SS_ID (" + hi + ")\n"
	}
	return "static __device__ __forceinline__ T ss_op(T a, T b) { return (a != a || a <= b) ? a : b; }\n#define SS_ID (" + hi + ")\n"
}

// shflFuncs are the warp shuffles of T (bytes travel as int).
func shflFuncs(d backend.DType) string {
	if d == backend.Uint8 {
		return `static __device__ __forceinline__ T ss_shfl_up(T v, int o) { return (T)__shfl_up_sync(0xffffffffu, (int)v, o); }
static __device__ __forceinline__ T ss_shfl_down(T v, int o) { return (T)__shfl_down_sync(0xffffffffu, (int)v, o); }
static __device__ __forceinline__ T ss_shfl(T v, int l) { return (T)__shfl_sync(0xffffffffu, (int)v, l); }
`
	}
	return `static __device__ __forceinline__ T ss_shfl_up(T v, int o) { return __shfl_up_sync(0xffffffffu, v, o); }
static __device__ __forceinline__ T ss_shfl_down(T v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
static __device__ __forceinline__ T ss_shfl(T v, int l) { return __shfl_sync(0xffffffffu, v, l); }
`
}

// ScanKernels returns the scan kernels of kind k over dtype d.
func ScanKernels(d backend.DType, k backend.ScanKind) ScanSet {
	spec := fmt.Sprintf("scan2|%v|%v", d, k)
	plain := "typedef T IT;\n#define SS_IN(ip, i) ((ip)[i])\n#define VECIN 1\n"
	return ssMemo(spec, func() ScanSet { return scanSet(d, k, kernelName("scan", spec), plain) })
}

// scanSet builds the scan kernels of kind k over dtype d named name; pre
// (C code before the kernels) defines IT, SS_IN and VECIN, what it scans.
func scanSet(d backend.DType, k backend.ScanKind, name, pre string) ScanSet {
	ipt := scanIPT(d)
	vec := 1
	if d.Size() >= 4 {
		vec = 16 / d.Size()
	}
	packed := d.Size() <= 4
	var b strings.Builder
	fmt.Fprintf(&b, "typedef %s T;\n#define BLOCK %d\n#define IPT %d\n#define TILE %d\n#define VEC %d\n#define PACKED %d\n",
		ctype(d), ScanBlock, ipt, ScanBlock*ipt, vec, flag01(packed))
	b.WriteString(scanOps(d, k))
	b.WriteString(shflFuncs(d))
	b.WriteString(lookbackHooks)
	b.WriteString(pre)
	b.WriteString(strings.ReplaceAll(scanBody, "NAME", name))
	src := b.String()
	return ScanSet{Rows: ssKernel(src, name+"_rows", ScanBlock), Cols: ssKernel(src, name+"_cols", ScanBlock),
		Tile: ScanBlock * ipt, Packed: packed}
}

func flag01(v bool) int {
	if v {
		return 1
	}
	return 0
}

// lookbackHooks are the status store and the spin of the look-back (on
// the word p it waits for); the host tests replace them to delay stores
// and so exercise every state.
const lookbackHooks = `#ifndef SS_STORE_STATUS
#define SS_STORE_STATUS(p, v) (*(volatile unsigned long long*)(p) = (v))
#endif
#ifndef SS_STORE_STATUS32
#define SS_STORE_STATUS32(p, v) (*(volatile unsigned int*)(p) = (v))
#endif
#ifndef SS_SPIN
#define SS_SPIN(p)
#endif
`

const scanBody = `
#define PAD(q) ((q) + ((q) >> 5))
typedef unsigned long long ST;

static __device__ __forceinline__ unsigned int ss_bits(T v) {
	union { T t; unsigned int u; } x;
	x.u = 0u;
	x.t = v;
	return x.u;
}
static __device__ __forceinline__ T ss_from(unsigned int u) {
	union { T t; unsigned int u; } x;
	x.u = u;
	return x.t;
}

// A tile's status: flag 0 nothing yet, 1 its aggregate, 2 its inclusive
// prefix. Types of at most 4 bytes pack flag and value in one word that
// is stored and loaded whole; wider ones keep the aggregate in aux[2t] and
// the inclusive prefix in aux[2t+1], written before the flag.
static __device__ __forceinline__ void ss_put(ST* st, T* aux, long long t, unsigned int f, T v) {
#if PACKED
	SS_STORE_STATUS(&st[t], ((ST)f << 32) | (ST)ss_bits(v));
#else
	aux[2 * t + (f - 1u)] = v;
	__threadfence();
	SS_STORE_STATUS(&st[t], (ST)f);
#endif
}

static __device__ __forceinline__ unsigned int ss_get(const ST* st, const T* aux, long long t, T* v) {
	const ST s = ((volatile const ST*)st)[t];
#if PACKED
	*v = ss_from((unsigned int)s);
	return (unsigned int)(s >> 32);
#else
	const unsigned int f = (unsigned int)s;
	if (f) {
		__threadfence();
		*v = ((volatile const T*)aux)[2 * t + (f - 1u)];
	}
	return f;
#endif
}

union ss_vec {
	int4 v;
	T e[VEC];
};

// The row scan: single pass with decoupled look-back (Merrill and
// Garland). Tiles take ids in launch order from the ticket st[tiles]; warp
// 0 reads the status of 32 predecessors at once and stops at the nearest
// inclusive prefix. All of st is zero at the start.
// SS_IN(ip, i) is the element to scan at position i of a row of IT: the
// input itself (IT is T and VECIN 1), or for Unique the flag of a new value.
extern "C" __global__ void __launch_bounds__(BLOCK) NAME_rows(const IT* __restrict__ in, T* __restrict__ out, long long len, long long tilesPerRow, long long rev,
		long long tiles, ST* st, T* aux) {
	__shared__ T sh[TILE + TILE / 32]; // padded: PAD(q) avoids bank conflicts of the blocked reads
	__shared__ T warpAgg[BLOCK / 32];
	__shared__ T prefix;
	__shared__ long long ticket;
	if (threadIdx.x == 0) ticket = (long long)atomicAdd(&st[tiles], 1ull);
	__syncthreads();
	const long long t = ticket;
	const long long row = t / tilesPerRow, tr = t % tilesPerRow;
	const long long start = tr * TILE;
	const long long cnt = len - start < TILE ? len - start : TILE;
	const IT* ip = in + row * len;
	T* op = out + row * len;
	const bool vec = VEC > 1 && VECIN && !rev && cnt == TILE && ((((unsigned long long)(ip + start)) | ((unsigned long long)(op + start))) & 15ull) == 0ull;
	if (vec) {
		const int4* src = (const int4*)((const T*)ip + start); // VECIN: IT is T
		for (int j = 0; j < IPT / VEC; j++) {
			const int q = j * BLOCK + threadIdx.x;
			ss_vec x;
			x.v = src[q];
			for (int c = 0; c < VEC; c++) sh[PAD(q * VEC + c)] = x.e[c];
		}
	} else {
		for (int j = 0; j < IPT; j++) {
			const long long q = j * BLOCK + threadIdx.x;
			if (q < cnt) sh[PAD(q)] = SS_IN(ip, rev ? len - 1 - (start + q) : start + q);
		}
	}
	__syncthreads();
	// Each thread scans IPT consecutive elements.
	T v[IPT];
	T acc = SS_ID;
	for (int j = 0; j < IPT; j++) {
		const long long q = (long long)threadIdx.x * IPT + j;
		const T x = q < cnt ? sh[PAD(q)] : SS_ID;
		acc = ss_op(acc, x);
		v[j] = acc;
	}
	// Warp and block inclusive scans of the thread aggregates.
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	T inc = acc;
	for (int o = 1; o < 32; o <<= 1) {
		const T y = ss_shfl_up(inc, o);
		if (lane >= o) inc = ss_op(y, inc);
	}
	if (lane == 31) warpAgg[warp] = inc;
	__syncthreads();
	T wpre = SS_ID;
	T total = SS_ID;
	for (int w = 0; w < BLOCK / 32; w++) {
		if (w < warp) wpre = ss_op(wpre, warpAgg[w]);
		total = ss_op(total, warpAgg[w]);
	}
	T excl = ss_shfl_up(inc, 1);
	if (lane == 0) excl = SS_ID;
	excl = ss_op(wpre, excl);
	if (warp == 0) {
		T pre = SS_ID;
		if (tr == 0) {
			if (lane == 0) ss_put(st, aux, t, 2u, total);
		} else {
			if (lane == 0) ss_put(st, aux, t, 1u, total);
			const long long first = t - tr; // the row's first tile, always inclusive
			for (long long j = t - 1;; j -= 32) {
				const long long at = j - lane;
				T x = SS_ID;
				unsigned int f = 2u;
				for (;;) {
					if (at >= first) f = ss_get(st, aux, at, &x);
					if (__all_sync(0xffffffffu, f != 0u)) break;
					SS_SPIN(at >= first ? (void*)&st[at] : (void*)0);
				}
				const unsigned int incl = __ballot_sync(0xffffffffu, f == 2u);
				const int stop = incl ? __ffs(incl) - 1 : 31;
				if (lane > stop) x = SS_ID;
				// Lane l holds tile j-l: older tiles combine on the left.
				for (int o = 1; o < 32; o <<= 1) {
					const T y = ss_shfl_down(x, o);
					if (lane + o < 32) x = ss_op(y, x);
				}
				pre = ss_op(ss_shfl(x, 0), pre);
				if (incl) break;
			}
			if (lane == 0) ss_put(st, aux, t, 2u, ss_op(pre, total));
		}
		if (lane == 0) prefix = pre;
	}
	__syncthreads();
	const T base = ss_op(prefix, excl);
	for (int j = 0; j < IPT; j++) {
		const long long q = (long long)threadIdx.x * IPT + j;
		if (q < cnt) sh[PAD(q)] = ss_op(base, v[j]);
	}
	__syncthreads();
	if (vec) {
		int4* dst = (int4*)(op + start);
		for (int j = 0; j < IPT / VEC; j++) {
			const int q = j * BLOCK + threadIdx.x;
			ss_vec x;
			for (int c = 0; c < VEC; c++) x.e[c] = sh[PAD(q * VEC + c)];
			dst[q] = x.v;
		}
	} else {
		for (int j = 0; j < IPT; j++) {
			const long long q = j * BLOCK + threadIdx.x;
			if (q < cnt) op[rev ? len - 1 - (start + q) : start + q] = sh[PAD(q)];
		}
	}
}

extern "C" __global__ void __launch_bounds__(BLOCK) NAME_cols(const T* __restrict__ in, T* __restrict__ out, long long outer, long long len, long long inner, long long rev) {
	for (long long c = (long long)blockIdx.x * BLOCK + threadIdx.x; c < outer * inner; c += (long long)gridDim.x * BLOCK) {
		const long long o = c / inner, j = c % inner;
		const T* ip = in + o * len * inner + j;
		T* op = out + o * len * inner + j;
		T acc = SS_ID;
		for (long long q = 0; q < len; q++) {
			const long long i = rev ? len - 1 - q : q;
			const T x = ip[i * inner];
			acc = q == 0 ? x : ss_op(acc, x);
			op[i * inner] = acc;
		}
	}
}
`

// SearchKernel returns the binary search kernel over dtype d.
func SearchKernel(d backend.DType) *Kernel {
	spec := fmt.Sprintf("search|%v", d)
	return ssMemo(spec, func() *Kernel {
		name := kernelName("search", spec)
		lt := "static __device__ __forceinline__ bool ss_lt(T a, T b) { return a < b; }\n"
		if d.IsFloat() {
			lt = "static __device__ __forceinline__ bool ss_lt(T a, T b) { return a < b || (b != b && a == a); }\n"
		}
		src := fmt.Sprintf("typedef %s T;\n", ctype(d)) + lt + strings.ReplaceAll(`
extern "C" __global__ void __launch_bounds__(256) NAME(const T* __restrict__ a, long long len, const T* __restrict__ v, long long n, long long right, long long* __restrict__ out) {
	for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n; i += (long long)gridDim.x * 256) {
		const T x = v[i];
		long long l = 0, h = len;
		while (l < h) {
			const long long m = (long long)((unsigned long long)(l + h) >> 1);
			const bool before = right ? !ss_lt(x, a[m]) : ss_lt(a[m], x);
			if (before) l = m + 1; else h = m;
		}
		out[i] = l;
	}
}
`, "NAME", name)
		return ssKernel(src, name, 256)
	})
}

// HistKernel returns the histogram kernel over dtype d, weighted or not.
func HistKernel(d backend.DType, weighted bool) *Kernel {
	spec := fmt.Sprintf("hist|%v|%v", d, weighted)
	return ssMemo(spec, func() *Kernel {
		name := kernelName("hist", spec)
		var b strings.Builder
		fmt.Fprintf(&b, "typedef %s T;\n#define HIST_SHARED %d\n", ctype(d), HistShared)
		if weighted {
			b.WriteString("#define WEIGHTED 1\n")
		}
		if d.IsFloat() {
			b.WriteString(`static __device__ __forceinline__ double ss_edge(double lo, double hi, long long n, long long k) {
	return k == n ? hi : lo + (double)k * ((hi - lo) / (double)n);
}
static __device__ __forceinline__ long long ss_bin(T v, long long n, double lo, double hi) {
	const double x = (double)v;
	if (!(x >= lo && x <= hi)) return -1;
	long long k = (long long)((x - lo) * ((double)n / (hi - lo)));
	if (k >= n) k = n - 1;
	if (k > 0 && x < ss_edge(lo, hi, n, k)) k--;
	else if (k < n - 1 && x >= ss_edge(lo, hi, n, k + 1)) k++;
	return k;
}
`)
		} else {
			b.WriteString(`static __device__ __forceinline__ long long ss_bin(T v, long long n, double lo, double hi) {
	const long long k = (long long)v;
	return k >= 0 && k < n ? k : -1;
}
`)
		}
		b.WriteString(strings.ReplaceAll(`
extern "C" __global__ void __launch_bounds__(256) NAME(const T* __restrict__ in, long long n, const double* __restrict__ w,
		unsigned long long* __restrict__ cnt, double* __restrict__ sum, long long bins, double lo, double hi) {
#ifndef WEIGHTED
	__shared__ unsigned int sh[HIST_SHARED];
	const bool priv = bins <= HIST_SHARED;
	if (priv) {
		for (long long k = threadIdx.x; k < bins; k += 256) sh[k] = 0u;
		__syncthreads();
	}
#endif
	for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n; i += (long long)gridDim.x * 256) {
		const long long k = ss_bin(in[i], bins, lo, hi);
		if (k < 0) continue;
#ifdef WEIGHTED
		atomicAdd(&sum[k], w[i]);
#else
		if (priv) atomicAdd(&sh[k], 1u);
		else atomicAdd(&cnt[k], 1ull);
#endif
	}
#ifndef WEIGHTED
	if (priv) {
		__syncthreads();
		for (long long k = threadIdx.x; k < bins; k += 256) {
			const unsigned int c = sh[k];
			if (c) atomicAdd(&cnt[k], (unsigned long long)c);
		}
	}
#endif
}
`, "NAME", name))
		return ssKernel(b.String(), name, 256)
	})
}

// UniqueSet is the kernels of Unique over one dtype.
type UniqueSet struct {
	Scatter, Finish *Kernel
	// Groups scans the flags of the first element of each run of equal
	// values (computed as it loads) into int32 group numbers, from 1.
	Groups ScanSet
}

// UniqueKernels returns the Unique kernels over dtype d.
func UniqueKernels(d backend.DType) UniqueSet {
	spec := fmt.Sprintf("unique|%v", d)
	return ssMemo(spec, func() UniqueSet {
		name := kernelName("unique", spec)
		var b strings.Builder
		fmt.Fprintf(&b, "typedef %s T;\n", ctype(d))
		if d.IsFloat() {
			b.WriteString("static __device__ __forceinline__ bool ss_same(T a, T b) { return a == b || (a != a && b != b); }\n")
		} else {
			b.WriteString("static __device__ __forceinline__ bool ss_same(T a, T b) { return a == b; }\n")
		}
		switch {
		case d.IsFloat():
			b.WriteString("#define FILL ((T)fillF)\n")
		case d == backend.Bool:
			b.WriteString("#define FILL (fillI != 0)\n")
		default:
			b.WriteString("#define FILL ((T)fillI)\n")
		}
		b.WriteString(strings.ReplaceAll(uniqueBody, "NAME", name))
		src := b.String()
		same := "a == b"
		if d.IsFloat() {
			same = "a == b || (a != a && b != b)"
		}
		pre := fmt.Sprintf(`typedef %s IT;
static __device__ __forceinline__ bool ss_same(IT a, IT b) { return %s; }
#define SS_IN(ip, i) (((i) == 0 || !ss_same((ip)[i], (ip)[(i) - 1])) ? 1 : 0)
#define VECIN 0
`, ctype(d), same)
		groups := scanSet(backend.Int32, backend.CumSum, kernelName("unique_groups", spec), pre)
		return UniqueSet{Scatter: ssKernel(src, name+"_scatter", 256), Finish: ssKernel(src, name+"_finish", 256), Groups: groups}
	})
}

const uniqueBody = `
#define LOOP(i, n) for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < (n); i += (long long)gridDim.x * 256)
// g holds the inclusive scan of the flags: the group of i is g[i] - 1.
extern "C" __global__ void __launch_bounds__(256) NAME_scatter(const T* __restrict__ s, const long long* __restrict__ perm, const int* __restrict__ g, long long n, long long cap,
		T* __restrict__ vals, long long* __restrict__ starts, long long* __restrict__ inv, long long* __restrict__ count) {
	LOOP(i, n) {
		const long long grp = (long long)g[i] - 1;
		const bool first = i == 0 || g[i - 1] != g[i];
		if (first && grp <= cap) {
			starts[grp] = i;
			if (vals && grp < cap) vals[grp] = s[i];
		}
		if (inv) inv[perm[i]] = grp;
		if (i == n - 1) count[0] = grp + 1;
	}
}
extern "C" __global__ void __launch_bounds__(256) NAME_finish(const long long* __restrict__ perm, const long long* __restrict__ starts, const long long* __restrict__ count, long long n, long long cap,
		T* __restrict__ vals, long long* __restrict__ index, long long* __restrict__ counts, double fillF, long long fillI, long long fill) {
	const long long k = count[0];
	LOOP(g, cap) {
		if (g < k) {
			const long long st = starts[g];
			const long long end = g + 1 < k ? starts[g + 1] : n;
			if (counts) counts[g] = end - st;
			if (index) index[g] = perm[st];
		} else if (fill) {
			if (vals) vals[g] = FILL;
			if (counts) counts[g] = 0;
			if (index) index[g] = 0;
		}
	}
}
`

// ZeroKernel returns the kernel that clears n 4-byte words.
func ZeroKernel() *Kernel {
	return ssMemo("zero", func() *Kernel {
		name := kernelName("zero", "ss")
		return ssKernel(strings.ReplaceAll(`extern "C" __global__ void __launch_bounds__(256) NAME(unsigned int* __restrict__ p, long long n) {
	for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n; i += (long long)gridDim.x * 256) p[i] = 0u;
}
`, "NAME", name), name, 256)
	})
}

// TopKBlock is the block size of the top-k kernel.
const TopKBlock = 256

// TopKSeg is the longest segment a block of the top-k kernel takes for
// keys of dtype d: the segment sits in shared memory.
func TopKSeg(d backend.DType) int {
	if d.Size() == 8 {
		return 3072
	}
	return 8192
}

// TopKKernel returns the radix-select top-k kernel for keys of dtype d: a
// block selects the K largest (order) keys of a segment of a row (at most
// TopKSeg keys, which it loads into shared memory once), from the raw
// values or from candidates an earlier launch wrote, by finding the
// K-th key a byte at a time (a histogram of the keys that match the
// prefix found so far, its byte chosen by a block-wide suffix scan),
// gathering the keys above it and enough equal to it (in index order
// only when some equal ones must be left out), and ranking those by
// (key, index).
func TopKKernel(d backend.DType) *Kernel {
	spec := fmt.Sprintf("topk3|%v", d)
	return ssMemo(spec, func() *Kernel {
		name := kernelName("topk", spec)
		var b strings.Builder
		fmt.Fprintf(&b, "typedef %s KT;\ntypedef %s UK;\n#define TB %d\n#define KMAX %d\n#define KBITS %d\n#define SEG %d\n",
			ctype(d), keyUnsigned(d), TopKBlock, backend.TopKMax, 8*max(d.Size(), 4), TopKSeg(d))
		b.WriteString(keyFuncs(d))
		b.WriteString(strings.ReplaceAll(topkBody, "NAME", name))
		return ssKernel(b.String(), name, TopKBlock)
	})
}

const topkBody = `
extern "C" __global__ void __launch_bounds__(TB) NAME(const KT* __restrict__ in, const UK* __restrict__ ckeys, const long long* __restrict__ cidx,
		long long len, long long segLen, long long segs, long long k, long long largest,
		UK* __restrict__ okeys, long long* __restrict__ oidx, KT* __restrict__ outk, long long* __restrict__ outi) {
	__shared__ unsigned int hist[256];
	__shared__ UK skey[SEG];
	__shared__ UK ck[KMAX];
	__shared__ long long ci[KMAX];
	__shared__ unsigned int wg[TB / 32], we[TB / 32];
	__shared__ long long sg, se, sneed, seq;
	__shared__ int ssel;
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const long long row = blockIdx.x / segs, seg = blockIdx.x % segs;
	const long long start = seg * segLen;
	const long long m = len - start < segLen ? len - start : segLen;
	const long long kk = k < m ? k : m;
	const long long base = row * len + start;
#define IDX(i) (in ? start + (i) : cidx[base + (i)])
	// Four loads in flight a thread.
	for (long long i0 = tid; i0 < m; i0 += 4 * TB) {
		UK v[4];
		for (int u = 0; u < 4; u++) {
			const long long i = i0 + u * TB;
			if (i < m) v[u] = in ? (largest ? ss_key(in[base + i]) : (UK)~ss_key(in[base + i])) : ckeys[base + i];
		}
		for (int u = 0; u < 4; u++) {
			if (i0 + u * TB < m) skey[i0 + u * TB] = v[u];
		}
	}
	__syncthreads();
#define KEY(i) skey[i]
	const unsigned int lt = (1u << lane) - 1u;
	UK prefix = 0, mask = 0;
	long long need = kk;
	// Find the kk-th largest key a byte at a time: count the bytes of the
	// keys that match the prefix found so far, then pick the byte whose
	// keys, with the larger ones, reach need. Warps add equal bytes once.
	for (int shift = KBITS - 8; shift >= 0; shift -= 8) {
		for (int d = tid; d < 256; d += TB) hist[d] = 0u;
		__syncthreads();
		for (long long c0 = 0; c0 < m; c0 += TB) {
			const long long i = c0 + tid;
			unsigned int bin = 256u;
			if (i < m) {
				const UK key = KEY(i);
				if ((key & mask) == prefix) bin = (unsigned int)(key >> shift) & 255u;
			}
			const unsigned int peers = __match_any_sync(0xffffffffu, bin);
			if (bin < 256u && (peers & lt) == 0u) atomicAdd(&hist[bin], (unsigned int)__popc(peers));
		}
		__syncthreads();
		// Thread d: the keys with a byte of d or more (a suffix scan).
		const int d = tid;
		const unsigned int h = hist[255 - d];
		unsigned int inc = h;
		for (int o = 1; o < 32; o <<= 1) {
			const unsigned int y = __shfl_up_sync(0xffffffffu, inc, o);
			if (lane >= o) inc += y;
		}
		if (lane == 31) wg[warp] = inc;
		__syncthreads();
		for (int w = 0; w < warp; w++) inc += wg[w];
		// Byte 255-d: inc keys from it up, inc-h above it.
		if ((long long)inc >= need && (long long)(inc - h) < need) {
			ssel = 255 - d;
			sneed = need - (long long)(inc - h);
			seq = h;
		}
		__syncthreads();
		prefix |= (UK)ssel << shift;
		mask |= (UK)255 << shift;
		need = sneed;
		__syncthreads();
	}
	const UK thr = prefix;
	const long long above = kk - need;
	if (tid == 0) {
		sg = 0;
		se = 0;
	}
	__syncthreads();
	if (seq == need) {
		// Every key equal to the threshold is taken: no order to keep.
		for (long long i = tid; i < m; i += TB) {
			const UK key = KEY(i);
			if (key > thr) {
				const long long q = atomicAdd((unsigned long long*)&sg, 1ull);
				ck[q] = key;
				ci[q] = IDX(i);
			} else if (key == thr) {
				const long long q = above + atomicAdd((unsigned long long*)&se, 1ull);
				ck[q] = key;
				ci[q] = IDX(i);
			}
		}
	} else {
		// Ties at the threshold: the first need of them in index order.
		for (long long c0 = 0; c0 < m; c0 += TB) {
			const long long i = c0 + tid;
			const bool v = i < m;
			const UK key = v ? KEY(i) : (UK)0;
			const bool gt = v && key > thr, eq = v && key == thr;
			const unsigned int bg = __ballot_sync(0xffffffffu, gt), be = __ballot_sync(0xffffffffu, eq);
			if (lane == 0) {
				wg[warp] = __popc(bg);
				we[warp] = __popc(be);
			}
			__syncthreads();
			long long pg = sg, pe = se, tg = 0, te = 0;
			for (int w = 0; w < TB / 32; w++) {
				if (w < warp) {
					pg += wg[w];
					pe += we[w];
				}
				tg += wg[w];
				te += we[w];
			}
			pg += __popc(bg & lt);
			pe += __popc(be & lt);
			if (gt) {
				ck[pg] = key;
				ci[pg] = IDX(i);
			} else if (eq && pe < need) {
				ck[above + pe] = key;
				ci[above + pe] = IDX(i);
			}
			__syncthreads();
			if (tid == 0) {
				sg += tg;
				se += te;
			}
			__syncthreads();
		}
	}
	__syncthreads();
	const long long out = blockIdx.x * k;
	for (long long c = tid; c < k; c += TB) {
		if (c >= kk) {
			if (okeys) {
				okeys[out + c] = (UK)0; // loses every tie: no candidate
				oidx[out + c] = 0x7fffffffffffffffll;
			}
			continue;
		}
		const UK kc = ck[c];
		const long long ic = ci[c];
		long long r = 0;
		for (long long j = 0; j < kk; j++) {
			const UK kj = ck[j];
			if (kj > kc || (kj == kc && ci[j] < ic)) r++;
		}
		if (okeys) {
			okeys[out + r] = kc;
			oidx[out + r] = ic;
		}
		if (outk) {
			outk[out + r] = ss_unkey(largest ? kc : (UK)~kc);
			outi[out + r] = ic;
		}
	}
#undef KEY
#undef IDX
}
`
