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
                 -fstack-clash-protection -fcf-protection -D_GNU_SOURCE -MMD -MP
CLIENT_LIBS   := -lssl -lcrypto -ljansson -lpthread

ifeq ($(SAN),1)
CLIENT_CFLAGS  += -fPIE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CLIENT_LDFLAGS := -pie -fsanitize=address,undefined -Wl,-z,relro,-z,now,-z,noexecstack
else
# -static: no interpreter, no dynamic section.  --gc-sections drops most of
# libcrypto we never call.  OpenSSL's static objects still reference
# dlopen/getaddrinfo (linker warnings); we never load modules and resolve IP
# literals ourselves (client/http.c).
CLIENT_CFLAGS  += -ffunction-sections -fdata-sections
CLIENT_LDFLAGS := -static -Wl,--gc-sections -Wl,-z,relro,-z,now,-z,noexecstack
endif

# More specific than the top Makefile's $(BUILD)/%.o rule, so it wins.
$(BUILD)/client/%.o: client/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CLIENT_CFLAGS) -c $< -o $@

$(BUILD)/sharness-client: $(CLIENT_OBJS)
	$(CC) $(CLIENT_CFLAGS) $(CLIENT_LDFLAGS) -o $@ $^ $(CLIENT_LIBS) 2> $@.ldwarn || { cat $@.ldwarn >&2; exit 1; }
	@grep -v -e "requires at runtime the shared libraries" -e "in function" $@.ldwarn >&2 || true
	@rm -f $@.ldwarn

.PHONY: client
client: $(BUILD)/sharness-client

-include $(CLIENT_OBJS:.o=.d)
