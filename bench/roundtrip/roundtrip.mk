# bench/roundtrip/roundtrip.mk - the round-trip benchmark of SPEC §13 (included by the top Makefile).
#   make bench-roundtrip    median POST /v0/run {"cmd":"true"} on one kept-alive mTLS connection
#                           vs bwrap --unshare-all --die-with-parent --ro-bind / / true and bash -c true,
#                           and sharness-client run -- true started fresh each time
#   ROUNDTRIP_N=300 ROUNDTRIP_WARMUP=30 ROUNDTRIP_GAPS="0 10" (ms pause before each sample) override.
#   make bench-ab AB_A=DIR AB_B=DIR   the same round trip of two builds (each DIR: a sharnessd and
#                           its sharnessd-front), side by side, in alternating blocks (ab.sh)
#   make bench-ab-cpu AB_A=DIR AB_B=DIR   the machine's CPU time and page faults per run of two
#                           builds, side by side, in alternating rounds (abcpu.sh)
#   make bench-parts        a kept-alive run's CPU by part (command, supervisor, init, launcher, ...),
#                           from the scheduler's accounting (parts.sh, PARTS_N runs, 200; needs perf)
.PHONY: bench-roundtrip bench-ab bench-ab-cpu bench-parts
$(BUILD)/bench/roundtrip: bench/roundtrip/roundtrip.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(WARN) -D_GNU_SOURCE -o $@ $< -lssl -lcrypto

bench-roundtrip: $(BUILD)/sharnessd $(BUILD)/sharness-client $(BUILD)/bench/roundtrip
	@BUILD=$(BUILD) bench/roundtrip/run.sh

bench-ab: $(BUILD)/sharness-client $(BUILD)/bench/roundtrip
	@BUILD=$(BUILD) bench/roundtrip/ab.sh "$(AB_A)" "$(AB_B)" $(AB_BLOCKS) $(AB_N)

bench-ab-cpu: $(BUILD)/bench/roundtrip
	@BUILD=$(BUILD) bench/roundtrip/abcpu.sh "$(AB_A)" "$(AB_B)" $(AB_ROUNDS) $(AB_N)

bench-parts: all $(BUILD)/bench/roundtrip
	@BUILD=$(BUILD) bench/roundtrip/parts.sh $(PARTS_N)
