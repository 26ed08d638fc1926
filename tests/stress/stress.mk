# tests/stress/stress.mk - the long load test (included by the top Makefile).
#   make stress    32 clients x 10,000 runs on kept-alive connections (tests/stress/stress.sh)
.PHONY: stress
stress: all
	@tests/stress/stress.sh
