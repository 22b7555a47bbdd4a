// Benchmarks/malloc-count — an LD_PRELOAD library that counts calls to the malloc family and free in
// the process it is loaded into, and appends one line at exit to the file named by MCOUNT_FILE
// (standard error without it):
//
//   MCOUNT malloc=N calloc=N realloc=N memalign=N free=N
//
// scripts/bench-sessions (ONLY=ab) runs two xmppload builds with it over 10 and 300 logins and prints
// the allocations per login: unlike CPU time on a shared VM, the count repeats to ~0.1 % run to run.
//
// It also keeps the live heap: bytes (malloc_usable_size, what the allocator hands out, headers not
// included) and blocks allocated and not yet freed, in total and per 16-byte size class up to 4 KiB.
// With MCOUNT_SNAPSHOT_FILE and MCOUNT_SNAPSHOT_AT (seconds after start) set, a thread writes them
// once at that moment:
//
//   LIVE bytes=N blocks=N
//   SIZE <usable bytes, a multiple of 16; 4096 = 4 KiB and more> <live blocks> <live bytes>   (one per class)
//
// scripts/bench-sessions (ONLY=ab-memory) takes it at the idle plateau of two runs per build to get the
// heap bytes per idle session without RSS's noise (fragmentation, glibc's arenas, page granularity).
// Build: cc -O2 -shared -fPIC -o malloc-count.so malloc-count.c -ldl -lpthread
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_ulong n_malloc, n_calloc, n_realloc, n_memalign, n_free;
enum { size_classes = 257 }; // 0, 16, 32, ... 4080, and 4096 for everything larger
static atomic_long live_bytes, live_blocks;
static atomic_long class_blocks[size_classes], class_bytes[size_classes];
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void (*real_free)(void *);
// dlsym itself calls calloc before real_calloc is known: serve those few calls from a static arena.
static _Alignas(16) char bootstrap[8192];
static size_t bootstrap_used;

static void resolve(void) {
  real_malloc = dlsym(RTLD_NEXT, "malloc");
  real_calloc = dlsym(RTLD_NEXT, "calloc");
  real_realloc = dlsym(RTLD_NEXT, "realloc");
  real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
  real_free = dlsym(RTLD_NEXT, "free");
}

static void count(atomic_ulong *counter) { atomic_fetch_add_explicit(counter, 1, memory_order_relaxed); }

static int in_bootstrap(void *block) { return (char *)block >= bootstrap && (char *)block < bootstrap + sizeof bootstrap; }

// sign +1 when a block is handed out, -1 when it is given back; NULL and the bootstrap arena are not counted
static void track(void *block, long sign) {
  if (!block || in_bootstrap(block)) return;
  long size = (long)malloc_usable_size(block);
  size_t index = size >= 4096 ? 256 : (size_t)(size + 15) / 16;
  atomic_fetch_add_explicit(&live_bytes, sign * size, memory_order_relaxed);
  atomic_fetch_add_explicit(&live_blocks, sign, memory_order_relaxed);
  atomic_fetch_add_explicit(&class_bytes[index], sign * size, memory_order_relaxed);
  atomic_fetch_add_explicit(&class_blocks[index], sign, memory_order_relaxed);
}

void *malloc(size_t size) {
  if (!real_malloc) resolve();
  count(&n_malloc);
  void *block = real_malloc(size);
  track(block, 1);
  return block;
}

void *calloc(size_t items, size_t size) {
  if (!real_calloc) {
    size_t bytes = (items * size + 15) & ~(size_t)15;
    if (bootstrap_used + bytes > sizeof bootstrap) return NULL;
    void *block = bootstrap + bootstrap_used;
    bootstrap_used += bytes;
    return block;
  }
  count(&n_calloc);
  void *block = real_calloc(items, size);
  track(block, 1);
  return block;
}

void *realloc(void *block, size_t size) {
  if (!real_realloc) resolve();
  count(&n_realloc);
  if (in_bootstrap(block)) return block; // never happens in practice: dlsym's few blocks are not resized
  track(block, -1);
  void *moved = real_realloc(block, size);
  // a failed realloc leaves the block where it was; realloc(p, 0) may free it and return NULL
  track(moved ? moved : (size ? block : NULL), 1);
  return moved;
}

int posix_memalign(void **block, size_t alignment, size_t size) {
  if (!real_posix_memalign) resolve();
  count(&n_memalign);
  int result = real_posix_memalign(block, alignment, size);
  if (result == 0) track(*block, 1);
  return result;
}

void *aligned_alloc(size_t alignment, size_t size) {
  if (!real_aligned_alloc) resolve();
  count(&n_memalign);
  void *block = real_aligned_alloc(alignment, size);
  track(block, 1);
  return block;
}

void free(void *block) {
  if (in_bootstrap(block)) return;
  if (!real_free) resolve();
  if (block) count(&n_free);
  track(block, -1);
  real_free(block);
}

static void *write_snapshot(void *path) {
  struct timespec wait = {.tv_sec = atol(getenv("MCOUNT_SNAPSHOT_AT")), .tv_nsec = 0};
  while (nanosleep(&wait, &wait) != 0) {}
  FILE *out = fopen(path, "w");
  if (!out) return NULL;
  fprintf(out, "LIVE bytes=%ld blocks=%ld\n", (long)live_bytes, (long)live_blocks);
  for (size_t index = 0; index < size_classes; index++)
    if (class_blocks[index]) fprintf(out, "SIZE %zu %ld %ld\n", index * 16, (long)class_blocks[index], (long)class_bytes[index]);
  fclose(out);
  return NULL;
}

__attribute__((constructor)) static void start_snapshot(void) {
  const char *path = getenv("MCOUNT_SNAPSHOT_FILE");
  if (!path || !getenv("MCOUNT_SNAPSHOT_AT")) return;
  pthread_t thread;
  if (pthread_create(&thread, NULL, write_snapshot, (void *)path) == 0) pthread_detach(thread);
}

__attribute__((destructor)) static void report(void) {
  char line[256];
  int length = snprintf(line, sizeof line, "MCOUNT malloc=%lu calloc=%lu realloc=%lu memalign=%lu free=%lu\n",
                        (unsigned long)n_malloc, (unsigned long)n_calloc, (unsigned long)n_realloc,
                        (unsigned long)n_memalign, (unsigned long)n_free);
  const char *path = getenv("MCOUNT_FILE");
  FILE *out = path ? fopen(path, "a") : NULL;
  if (out) {
    fputs(line, out);
    fclose(out);
  } else if (length > 0) {
    ssize_t ignored = write(2, line, (size_t)length);
    (void)ignored;
  }
}
