#if canImport(Glibc)
import Glibc
#endif

/// How the run asks glibc's allocator to place large blocks.
///
/// Every interval the metrics recorder starts each latency histogram afresh (storage on first
/// recording, ~190 KB of dense counts each) and hands the full ones to the collector. glibc's mmap
/// threshold starts at 128 KiB and, by default, rises to the size of the largest mmap'd block freed,
/// after which those histograms are carved from the event loop's heap, between the sessions' small
/// objects. Freed, the holes they leave are split for session allocations, the next interval's
/// histograms no longer fit and the heap grows: `scripts/bench-sessions` measured ~0.3 KiB per idle
/// session more than the engine before the split, growing with the run's length rather than its
/// sessions. Fixing the threshold at its default keeps every block of 128 KiB or more in its own
/// mapping, returned to the kernel when freed (a few mmap/munmap calls per interval).
/// (`MALLOC_MMAP_THRESHOLD_=131072` in the environment does the same.)
enum MallocTuning {
    /// glibc's default `M_MMAP_THRESHOLD`, in bytes; setting it explicitly disables the dynamic rise.
    static let mmapThresholdBytes: Int32 = 128 * 1024
    /// `M_MMAP_THRESHOLD` in glibc's `<malloc.h>`, which the Glibc module does not import.
    private static let mmapThresholdParameter: Int32 = -3

    /// Applies the setting; a no-op where the C library has no `mallopt`. Call once, before the run starts.
    static func apply() {
        #if canImport(Glibc)
        typealias MalloptFunction = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return }  // nil handle: RTLD_DEFAULT
        _ = unsafeBitCast(symbol, to: MalloptFunction.self)(mmapThresholdParameter, mmapThresholdBytes)
        #endif
    }
}
