# client/client.mk - build/sharness-client, included by the top Makefile.
#
# One statically linked binary (SPEC §10): glibc -static with Debian's
# libssl.a/libcrypto.a and libjansson.a.  Same warnings as the daemon; the
# hardening that works with -static (no PIE: `file` must say "statically
# linked", so -static rather than -static-pie).  With SAN=1 (make asan) it is
# linked dynamically instead, because ASan cannot be linked statically.

CLIENT_SRCS   := $(sort $(wildcard client/*.c))
CLIENT_OBJS   := $(CLIENT_SRCS:%.c=$(BUILD)/%.o)
CLIENT_CFLAGS := $(OPT) $(WARN) -D_FORTIFY_SOURCE=3 -fstack-protector-strong \
                 -fstack-clash-protection -fcf-protection -D_GNU_SOURCE -MMD -MP \
                 -iquote daemon/common
# (daemon/common for its header-only helpers, monotime.h: nothing of the
# daemon is compiled into or linked with the client.)
# The link line comes from the libraries' own .pc files, so it follows what
# this system's build of them needs: Debian 13's libcrypto.a also calls zlib
# and zstd (Libs.private), Debian 12's does not.  Expanded only when the
# client is linked, after `make deps` has installed pkg-config.
PKG_CONFIG    ?= pkg-config
CLIENT_PKGS   := libssl libcrypto jansson

ifeq ($(SAN),1)
CLIENT_CFLAGS  += -fPIE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CLIENT_LDFLAGS := -pie -fsanitize=address,undefined -Wl,-z,relro,-z,now,-z,noexecstack
CLIENT_LIBS     = $(shell $(PKG_CONFIG) --libs $(CLIENT_PKGS)) -lpthread
else
# -static: no interpreter, no dynamic section.  --gc-sections drops most of
# libcrypto we never call.  OpenSSL's static objects still reference
# dlopen/getaddrinfo (linker warnings; Debian 13's ld adds a note per warning,
# on stdout, that it ignores --gc-sections, hence both streams go to .ldwarn);
# we never load modules and resolve IP literals ourselves (client/http.c).
CLIENT_CFLAGS  += -ffunction-sections -fdata-sections
# The unwind tables are found through their program header instead of
# being registered at start (client/frames.c: 0.3-0.5 ms a start with gcc 14).
CLIENT_LDFLAGS := -static -Wl,--gc-sections -Wl,-z,relro,-z,now,-z,noexecstack \
                  -Wl,--eh-frame-hdr -Wl,--wrap=__register_frame_info -Wl,--wrap=__deregister_frame_info
CLIENT_LIBS     = $(shell $(PKG_CONFIG) --static --libs $(CLIENT_PKGS)) -lpthread
endif

# More specific than the top Makefile's $(BUILD)/%.o rule, so it wins.
$(BUILD)/client/%.o: client/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CLIENT_CFLAGS) -c $< -o $@

$(BUILD)/sharness-client: $(CLIENT_OBJS)
	$(CC) $(CLIENT_CFLAGS) $(CLIENT_LDFLAGS) -o $@ $^ $(CLIENT_LIBS) > $@.ldwarn 2>&1 || { cat $@.ldwarn >&2; exit 1; }
	@grep -v -e "requires at runtime the shared libraries" -e "in function" \
	         -e "does not take linker garbage collection into account" $@.ldwarn >&2 || true
	@rm -f $@.ldwarn

# A program that unwinds, linked as the client is (client_static.sh runs it).
$(BUILD)/tests/client_unwind: tests/client/unwind.c $(BUILD)/client/frames.o
	@mkdir -p $(dir $@)
	$(CC) $(CLIENT_CFLAGS) $(CLIENT_LDFLAGS) -o $@ $^ -lpthread

.PHONY: client
client: $(BUILD)/sharness-client

-include $(CLIENT_OBJS:.o=.d)
