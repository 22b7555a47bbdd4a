/* CMallocInfo: the live heap and process CPU for Benchmarks/tls-floor (glibc's mallinfo2 and
 * getrusage, which Swift's Glibc module does not expose in a callable form). */
#ifndef XMPPLOAD_CMALLOCINFO_SHIM_H
#define XMPPLOAD_CMALLOCINFO_SHIM_H
#include <malloc.h>
#include <sys/resource.h>

/* Bytes malloc has handed out and not had back (all arenas; mmapped blocks included). */
static inline size_t xl_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

/* User + system CPU of this process, microseconds. */
static inline long long xl_process_cpu_us(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (long long)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000LL + usage.ru_utime.tv_usec
        + usage.ru_stime.tv_usec;
}
#endif
