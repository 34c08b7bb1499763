# Sourced by the bench scripts: bench_exe NAME prints the path of the `dist`-profile executable of
# the bench target NAME, building it if needed (run from the repository root). The baselines are
# built as the measured bridge is (`dist`: fat LTO, one codegen unit), so neither gains on the other.
bench_exe() {
    cargo bench --profile dist --no-run --bench "$1" --message-format=json 2>/dev/null \
        | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])' "$1" | tail -n 1
}
