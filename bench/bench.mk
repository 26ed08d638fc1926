# bench/bench.mk - benchmarks, included by the top Makefile.
#   make bench          every benchmark
#   make bench-filter   the secret filter vs secretlint 12.0.0 (SPEC §13)

.PHONY: bench bench-filter

bench: bench-filter

# The filter as a command, without the rest of the daemon, so the benchmark
# also runs before build/sharnessd links.
$(BUILD)/bench/filter_bench: bench/filter/filter_bench.c $(DAEMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(DAEMON_LIB) $(LIBS)

bench-filter: $(BUILD)/bench/filter_bench
	@BUILD=$(BUILD) bench/filter/run.sh
