// A stand-in for libnccl with NCCL's C ABI, for the CPU tests: it records
// the arguments of every call so the tests can check what the Go side
// passed (the 128-byte ncclUniqueId by value above all), logs the names of
// the calls (fakeLog), and mimics NCCL 2.28's group rules: work called
// inside ncclGroupStart/End is launched by ncclGroupEnd, and a call that
// NCCL refuses early (a NULL comm) does not stop the rest of the group
// from launching. ncclGetLastError's text changes only when a call fails
// with a message, as NCCL's WARN does. Built by the tests with the system C
// compiler.
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
static int groupDepth, launches, pending;
static int failNext; // the next collective returns this code
static char failMsg[256]; // ... and logs this warning
static int failEnd; // the next outermost ncclGroupEnd returns this code
static char callLog[4096];

static void logCall(const char* name) {
	size_t n = strlen(callLog);
	snprintf(callLog + n, sizeof callLog - n, "%s%s", n ? " " : "", name);
}

static void rec(const char* name, int n, ...) ;

#include <stdarg.h>
static void rec(const char* name, int n, ...) {
	va_list ap;
	va_start(ap, n);
	snprintf(lastName, sizeof lastName, "%s", name);
	logCall(name);
	for (int i = 0; i < 8; i++) lastArgs[i] = i < n ? va_arg(ap, uint64_t) : 0;
	va_end(ap);
}

int fakeLast(char* name, uint64_t* args, unsigned char* id) {
	memcpy(name, lastName, sizeof lastName);
	memcpy(args, lastArgs, sizeof lastArgs);
	memcpy(id, lastID, sizeof lastID);
	return launches;
}
// The next call fails with code, logging msg as its warning (none if empty).
void fakeFailNext(int code, const char* msg) {
	failNext = code;
	snprintf(failMsg, sizeof failMsg, "%s", msg ? msg : "");
}
// A warning logged now, by a call that did not fail.
void fakeWarn(const char* msg) { snprintf(lastError, sizeof lastError, "%s", msg); }
// The next outermost ncclGroupEnd fails with code and msg.
void fakeFailGroupEnd(int code, const char* msg) {
	failEnd = code;
	snprintf(failMsg, sizeof failMsg, "%s", msg ? msg : "");
}
// Copies the names of the calls made since the last fakeLog, space-separated, and clears them.
void fakeLog(char* out, int n) {
	snprintf(out, n, "%s", callLog);
	callLog[0] = 0;
}
static int fail(void) {
	int r = failNext;
	failNext = 0;
	if (failMsg[0]) snprintf(lastError, sizeof lastError, "%s", failMsg);
	failMsg[0] = 0;
	return r;
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
		// NCCL 2.28 refuses this before the call joins the group: the
		// group's error is not set and ncclGroupEnd launches the rest.
		snprintf(lastError, sizeof lastError, "%s : comm argument is NULL", name);
		return 4;
	}
	if (failNext) return fail();
	if (groupDepth > 0) pending++; else launches++;
	return 0;
}

int ncclCommInitRank(void** comm, int nranks, ncclUniqueId id, int rank) {
	memcpy(lastID, id.internal, 128);
	rec("ncclCommInitRank", 2, (uint64_t)nranks, (uint64_t)rank);
	if (failNext) { *comm = NULL; return fail(); }
	fakeComm* c = &comms[ncomms++ % 64];
	c->magic = 0x1234; c->nranks = nranks; c->rank = rank; c->dev = 0;
	*comm = c;
	return 0;
}
int ncclCommInitAll(void** comm, int ndev, const int* devlist) {
	rec("ncclCommInitAll", 4, (uint64_t)ndev, (uint64_t)devlist[0], (uint64_t)(ndev > 1 ? devlist[1] : -1), 0);
	for (int i = 0; i < ndev; i++)
		for (int j = 0; j < i; j++)
			if (devlist[i] == devlist[j]) {
				snprintf(lastError, sizeof lastError, "Duplicate GPU detected : rank %d and rank %d both on CUDA device %d", j, i, devlist[i]);
				return 5;
			}
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
int ncclCommGetAsyncError(void* c, int* e) { rec("ncclCommGetAsyncError", 1, (uint64_t)(uintptr_t)c); *e = failNext ? fail() : 0; return 0; }
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
int ncclGroupStart(void) { logCall("ncclGroupStart"); groupDepth++; return 0; }
int ncclGroupEnd(void) {
	logCall("ncclGroupEnd");
	if (groupDepth == 0) return 5;
	if (--groupDepth > 0) return 0;
	int r = 0;
	if (failEnd) {
		r = failEnd;
		failEnd = 0;
		if (failMsg[0]) snprintf(lastError, sizeof lastError, "%s", failMsg);
		failMsg[0] = 0;
	}
	if (r == 0) launches += pending;
	pending = 0;
	return r;
}
