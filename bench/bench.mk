# bench/bench.mk - benchmarks, included by the top Makefile.
#   make bench          every benchmark
#   make bench-filter   the secret filter vs secretlint 12.0.0 (SPEC §13)
#   make bench-filter-classes  the filter's rate per content class (source, build logs,
#                       JSON, minified JS, base64, prose), each against 2 GB/s
#   make bench-filter-avx2  the same as a CPU without AVX-512 runs it (Vectorscan's
#                       AVX2 build, ours with SHARNESS_FILTER_AVX512=off)
#   make bench-filter-debian13  both as Debian 13 runs them: the same binary with
#                       Debian 13's Vectorscan (5.4.11; Debian 12 has 5.4.9) and C library,
#                       fetched from its packages into build/bench/debian13 (DEBIAN13_MIRROR)
#   make bench-build    this repository's build inside the test profile vs outside
#   make bench-throughput  32 clients' runs/s vs two parallel bare bwrap loops (SPEC §15.5),
#                       alternated THROUGHPUT_PAIRS times (3), the median ratio; and
#                       against bwrap running the clients' program (/usr/bin/echo)
#   make bench-throughput-vm  that inside Debian 12 booted under systemd, with its
#                       pure cgroup v2 and again with the hybrid layout (LAYOUTS="v2 hybrid")

.PHONY: bench bench-filter bench-filter-classes bench-filter-avx2 bench-filter-debian13 bench-build bench-throughput bench-throughput-vm

bench: bench-filter bench-filter-classes bench-build bench-roundtrip bench-throughput

bench-throughput: all $(BUILD)/bench/roundtrip $(BUILD)/bench/loadclient
	@BUILD=$(BUILD) bench/throughput/run.sh

bench-throughput-vm: vm-deps all $(BUILD)/bench/roundtrip $(BUILD)/bench/loadclient
	@BUILD=$(BUILD) bench/throughput/vm.sh $(LAYOUTS)

bench-build: all
	@bench/realbuild/run.sh

# The filter as a command, without the rest of the daemon, so the benchmark
# also runs before build/sharnessd links.
$(BUILD)/bench/filter_bench: bench/filter/filter_bench.c $(DAEMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC_ALL) $(LDFLAGS) -o $@ $< $(DAEMON_LIB) $(LIBS)

bench-filter: $(BUILD)/bench/filter_bench
	@BUILD=$(BUILD) bench/filter/run.sh

bench-filter-classes: $(BUILD)/bench/filter_bench
	@BUILD=$(BUILD) bench/filter/classes.sh

$(BUILD)/bench/avx2_shim.so: bench/filter/avx2_shim.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(WARN) -shared -fPIC -o $@ $< -ldl -lhs

bench-filter-avx2: $(BUILD)/bench/filter_bench $(BUILD)/bench/avx2_shim.so
	@echo "as a CPU without AVX-512 runs it: Vectorscan's AVX2 build (bench/filter/avx2_shim.c), SHARNESS_FILTER_AVX512=off"
	@BUILD=$(BUILD) FILTER_PRELOAD=$(abspath $(BUILD)/bench/avx2_shim.so) SHARNESS_FILTER_AVX512=off bench/filter/classes.sh

bench-filter-debian13: $(BUILD)/bench/filter_bench $(BUILD)/bench/avx2_shim.so
	@BUILD=$(BUILD) bench/filter/debian13.sh

$(BUILD)/bench/loadclient: bench/throughput/loadclient.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(WARN) -D_GNU_SOURCE -o $@ $< -lssl -lcrypto -lpthread
