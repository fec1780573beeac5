// A stand-in for libnccl with NCCL's C ABI, for the CPU tests: it records
// the arguments of every call so the tests can check what the Go side
// passed (the 128-byte ncclUniqueId by value above all), and mimics NCCL's
// group rules (a failed call inside a group fails ncclGroupEnd, which then
// launches nothing). Built by the tests with the system C compiler.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef FAKE_VERSION
#define FAKE_VERSION 22605
#endif

typedef struct { char internal[128]; } ncclUniqueId;
typedef struct fakeComm { int magic, nranks, rank, dev; } fakeComm;

static fakeComm comms[64];
static int ncomms;
static char lastError[256];

// What the last call saw, read back by fakeLast.
static char lastName[64];
static uint64_t lastArgs[8];
static unsigned char lastID[128];
static int groupDepth, groupError, launches, pending;
static int failNext; // the next collective returns this code

static void rec(const char* name, int n, ...) ;

#include <stdarg.h>
static void rec(const char* name, int n, ...) {
	va_list ap;
	va_start(ap, n);
	snprintf(lastName, sizeof lastName, "%s", name);
	for (int i = 0; i < 8; i++) lastArgs[i] = i < n ? va_arg(ap, uint64_t) : 0;
	va_end(ap);
}

int fakeLast(char* name, uint64_t* args, unsigned char* id) {
	memcpy(name, lastName, sizeof lastName);
	memcpy(args, lastArgs, sizeof lastArgs);
	memcpy(id, lastID, sizeof lastID);
	return launches;
}
void fakeFailNext(int code, const char* msg) {
	failNext = code;
	if (msg) snprintf(lastError, sizeof lastError, "%s", msg);
}

int ncclGetVersion(int* v) { *v = FAKE_VERSION; return 0; }
int ncclGetUniqueId(ncclUniqueId* id) {
	for (int i = 0; i < 128; i++) id->internal[i] = (char)(i * 7 + 3);
	return 0;
}
const char* ncclGetErrorString(int r) {
	switch (r) {
	case 0: return "no error";
	case 4: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case 5: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case 6: return "remote process exited or there was a network error";
	default: return "unknown result code";
	}
}
const char* ncclGetLastError(void* comm) { (void)comm; return lastError; }

static int collective(const char* name, void* comm) {
	if (!comm) {
		snprintf(lastError, sizeof lastError, "%s : comm argument is NULL", name);
		if (groupDepth > 0) groupError = 4;
		return 4;
	}
	if (failNext) {
		int r = failNext;
		failNext = 0;
		if (groupDepth > 0) groupError = r;
		return r;
	}
	if (groupDepth > 0) pending++; else launches++;
	return 0;
}

int ncclCommInitRank(void** comm, int nranks, ncclUniqueId id, int rank) {
	memcpy(lastID, id.internal, 128);
	rec("ncclCommInitRank", 2, (uint64_t)nranks, (uint64_t)rank);
	if (failNext) { int r = failNext; failNext = 0; *comm = NULL; return r; }
	fakeComm* c = &comms[ncomms++ % 64];
	c->magic = 0x1234; c->nranks = nranks; c->rank = rank; c->dev = 0;
	*comm = c;
	return 0;
}
int ncclCommInitAll(void** comm, int ndev, const int* devlist) {
	rec("ncclCommInitAll", 4, (uint64_t)ndev, (uint64_t)devlist[0], (uint64_t)(ndev > 1 ? devlist[1] : -1), 0);
	for (int i = 0; i < ndev; i++)
		for (int j = 0; j < i; j++)
			if (devlist[i] == devlist[j]) return 5;
	for (int i = 0; i < ndev; i++) {
		fakeComm* c = &comms[ncomms++ % 64];
		c->magic = 0x1234; c->nranks = ndev; c->rank = i; c->dev = devlist[i];
		comm[i] = c;
	}
	return 0;
}
int ncclCommFinalize(void* c) { rec("ncclCommFinalize", 1, (uint64_t)(uintptr_t)c); return 0; }
int ncclCommDestroy(void* c) { rec("ncclCommDestroy", 1, (uint64_t)(uintptr_t)c); return 0; }
int ncclCommAbort(void* c) { rec("ncclCommAbort", 1, (uint64_t)(uintptr_t)c); return 0; }
int ncclCommGetAsyncError(void* c, int* e) { rec("ncclCommGetAsyncError", 1, (uint64_t)(uintptr_t)c); *e = failNext; failNext = 0; return 0; }
int ncclCommCount(void* c, int* n) { *n = ((fakeComm*)c)->nranks; return 0; }
int ncclCommCuDevice(void* c, int* d) { *d = ((fakeComm*)c)->dev; return 0; }
int ncclCommUserRank(void* c, int* r) { *r = ((fakeComm*)c)->rank; return 0; }

int ncclAllReduce(const void* s, void* r, size_t n, int dt, int op, void* comm, void* stream) {
	rec("ncclAllReduce", 7, (uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)r, (uint64_t)n, (uint64_t)dt, (uint64_t)op, (uint64_t)(uintptr_t)comm, (uint64_t)(uintptr_t)stream);
	return collective("AllReduce", comm);
}
int ncclBroadcast(const void* s, void* r, size_t n, int dt, int root, void* comm, void* stream) {
	rec("ncclBroadcast", 7, (uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)r, (uint64_t)n, (uint64_t)dt, (uint64_t)root, (uint64_t)(uintptr_t)comm, (uint64_t)(uintptr_t)stream);
	return collective("Broadcast", comm);
}
int ncclReduce(const void* s, void* r, size_t n, int dt, int op, int root, void* comm, void* stream) {
	rec("ncclReduce", 8, (uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)r, (uint64_t)n, (uint64_t)dt, (uint64_t)op, (uint64_t)root, (uint64_t)(uintptr_t)comm, (uint64_t)(uintptr_t)stream);
	return collective("Reduce", comm);
}
int ncclAllGather(const void* s, void* r, size_t n, int dt, void* comm, void* stream) {
	rec("ncclAllGather", 6, (uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)r, (uint64_t)n, (uint64_t)dt, (uint64_t)(uintptr_t)comm, (uint64_t)(uintptr_t)stream);
	return collective("AllGather", comm);
}
int ncclReduceScatter(const void* s, void* r, size_t n, int dt, int op, void* comm, void* stream) {
	rec("ncclReduceScatter", 7, (uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)r, (uint64_t)n, (uint64_t)dt, (uint64_t)op, (uint64_t)(uintptr_t)comm, (uint64_t)(uintptr_t)stream);
	return collective("ReduceScatter", comm);
}
int ncclSend(const void* b, size_t n, int dt, int peer, void* comm, void* stream) {
	if (comm) rec("ncclSend", 6, (uint64_t)(uintptr_t)b, (uint64_t)n, (uint64_t)dt, (uint64_t)peer, (uint64_t)(uintptr_t)comm, (uint64_t)(uintptr_t)stream);
	return collective("Send", comm);
}
#ifndef NO_RECV
int ncclRecv(void* b, size_t n, int dt, int peer, void* comm, void* stream) {
	rec("ncclRecv", 6, (uint64_t)(uintptr_t)b, (uint64_t)n, (uint64_t)dt, (uint64_t)peer, (uint64_t)(uintptr_t)comm, (uint64_t)(uintptr_t)stream);
	return collective("Recv", comm);
}
#endif
int ncclGroupStart(void) { groupDepth++; return 0; }
int ncclGroupEnd(void) {
	if (groupDepth == 0) return 5;
	if (--groupDepth > 0) return 0;
	int r = groupError;
	groupError = 0;
	if (r == 0) launches += pending;
	pending = 0;
	return r;
}
