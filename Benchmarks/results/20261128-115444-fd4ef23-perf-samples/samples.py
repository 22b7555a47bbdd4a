import re, sys, subprocess
groups = [
 ("rr", r"^(swift_(nonatomic_)?(retain|release|tryRetain|bridgeObjectRetain|bridgeObjectRelease|unknownObjectRetain|unknownObjectRelease)(_n)?|_swift_release_dealloc|swift_deallocObject|swift_deallocClassInstance)$|RefCounts"),
 ("excl", r"swift_beginAccess|swift_endAccess|AccessSet"),
 ("malloc", r"^(malloc|free|calloc|realloc|cfree|_int_malloc|_int_free|_int_realloc|_int_memalign|malloc_consolidate|__libc_(malloc|free|calloc|realloc|memalign)|tcache_\w+|posix_memalign|aligned_alloc|malloc_usable_size|unlink_chunk[\w.]*|swift_slowAlloc|swift_slowDealloc|swift_allocObject)$"),
 ("meta", r"__swift_instantiateConcreteTypeFromMangledName|swift_getGenericMetadata|getCache|MetadataCache|ConcurrentReadableHashMap|swift_getTypeByMangledName|swift_getWitnessTable|swift_checkMetadataState|swift_getAssociated(Type|Conformance)Witness|swift_conformsToProtocol|swift_get(Tuple|Function|Existential)TypeMetadata|swift_getCanonical|swift_getSingletonMetadata|swift_allocateGenericValueMetadata|swift_getOpaqueTypeConformance|MetadataAllocator|Demangle|TypeDecoder|_swift_getGenericMetadata|swift_getForeignTypeMetadata"),
]
print(f"{'file':42} {'samples':>8} {'user':>7} {'kernel':>7} " + " ".join(f"{g:>7}" for g, _ in groups) + "  four")
for f in sys.argv[1:]:
    out = subprocess.run(["perf", "report", "-i", f, "--no-children", "--sort", "dso,sym", "-g", "none", "--stdio", "--percent-limit", "0", "-F", "sample,dso,sym"], capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+(\S+)\s+\[(.)\]\s+(.*\S)", line)
        if m: rows.append((int(m.group(1)), m.group(2), m.group(4)))
    total = sum(r[0] for r in rows); kernel = sum(r[0] for r in rows if r[1].startswith("[kernel"))
    claimed = set(); vals = []
    for g, p in groups:
        s = 0
        for i, (n, d, sym) in enumerate(rows):
            if i not in claimed and re.search(p, sym): s += n; claimed.add(i)
        vals.append(s)
    print(f"{f:42} {total:8d} {total-kernel:7d} {kernel:7d} " + " ".join(f"{v:7d}" for v in vals) + f"  {sum(vals)}")
