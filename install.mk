# install.mk - make install / make uninstall, included by the top Makefile (SPEC §11).
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [SYSCONFDIR=/etc] ...
#   make uninstall (same variables)
#
# Layout (PREFIX defaults to /usr/local):
#   $(SBINDIR)/sharnessd                  the daemon (root's part) (0755)
#   $(LIBEXECDIR)/sharness/sharnessd-front the daemon's network half, which
#                                         sharnessd execs as its own uid: it
#                                         looks for it in ../libexec/sharness
#                                         beside itself, so LIBEXECDIR must be
#                                         $(PREFIX)/libexec (the default)
#   $(LIBEXECDIR)/sharness/sharness-actor  a run's file actor, which sharnessd
#                                         execs as the run (0755, static)
#   $(LIBEXECDIR)/sharness/user-relays    scripts/user-relays: stops (uninstall, the
#                                         package's removal) or restarts (its upgrade)
#                                         every user's running relay (0755)
#   $(BINDIR)/sharness-client             the client              (0755)
#   $(BINDIR)/sharness-mkcerts            certs/mkcerts           (0755)
#   $(MANDIR)/man{1,5,8}/...              sharness-client.1 sharness-mkcerts.1 sharnessd.json.5 sharnessd.8
#   $(SYSTEMDUNITDIR)/sharnessd.{service,socket}
#                                         $(PREFIX)/lib/systemd/system: systemd 252 searches
#                                         /usr/local/lib/systemd/system and /usr/lib/... itself;
#                                         for another PREFIX pass SYSTEMDUNITDIR=/etc/systemd/system
#   $(SYSTEMDUSERUNITDIR)/sharness-relay.service
#                                         a user unit, $(PREFIX)/lib/systemd/user (the user
#                                         manager searches both prefixes too), never enabled
#   $(SYSCONFDIR)/sharness/sharnessd.json the configuration       (0644)
#   $(SYSCONFDIR)/sharness/profiles/*.json                        (0644)
#   $(SYSCONFDIR)/sharness/certs/         for sharness-mkcerts    (0700, left empty)
#   $(LOCALSTATEDIR)/lib/sharness         state_dir               (0700)
#   $(LOCALSTATEDIR)/log/sharness         the audit log's directory (0700)
#   $(WORKSPACEDIR)                       the default workspace   (0755)
# Everything is put below $(DESTDIR), which is for packaging and tests only:
# the installed files name their final paths, never DESTDIR.
#
# Configuration is the operator's: an existing sharnessd.json or profile that
# differs from the shipped one is kept, and the shipped one is written next to
# it as NAME.new (the daemon loads *.json only, so a .new file is inert).
# uninstall removes programs, man pages and units, and removes configuration
# files only when they are unchanged; certificates, state and logs stay.

BINDIR         ?= $(PREFIX)/bin
SBINDIR        ?= $(PREFIX)/sbin
LIBEXECDIR     ?= $(PREFIX)/libexec
MANDIR         ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
SYSCONFDIR     ?= /etc
LOCALSTATEDIR  ?= /var
WORKSPACEDIR   ?= /srv/sharness

SHARNESS_ETC   := $(SYSCONFDIR)/sharness
INSTALL        ?= install

# The shipped files name /usr/local and /etc; point them at the chosen paths.
INSTALL_SED := -e 's|/usr/local/sbin/sharnessd|$(SBINDIR)/sharnessd|g' \
               -e 's|/usr/local/bin/sharness-client|$(BINDIR)/sharness-client|g' \
               -e 's|/etc/sharness|$(SHARNESS_ETC)|g' \
               -e 's|/var/lib/sharness|$(LOCALSTATEDIR)/lib/sharness|g' \
               -e 's|/var/log/sharness|$(LOCALSTATEDIR)/log/sharness|g' \
               -e 's|/srv/sharness|$(WORKSPACEDIR)|g'

# install_conf SRC DST (shell): install a configuration file unless the operator has one.
INSTALL_CONF = install_conf() { \
	if [ ! -e "$$2" ]; then $(INSTALL) -m 0644 "$$1" "$$2" && echo "installed $$2"; \
	elif cmp -s "$$1" "$$2"; then echo "unchanged $$2"; \
	else $(INSTALL) -m 0644 "$$1" "$$2.new" && echo "kept your $$2; the shipped version is $$2.new"; fi; }

# remove_conf SRC DST (shell): remove a configuration file only if it is the shipped one.
REMOVE_CONF = remove_conf() { \
	if [ -e "$$2" ] && ! cmp -s "$$1" "$$2"; then echo "kept $$2 (changed since install)"; \
	else rm -f "$$2"; fi; \
	if [ -e "$$2.new" ] && cmp -s "$$1" "$$2.new"; then rm -f "$$2.new"; fi; }

INSTALL_STAGE := $(BUILD)/install

.PHONY: install uninstall install-stage

# The files whose paths are rewritten are made under build/install first, so
# that the comparisons above see exactly what would be installed.
install-stage:
	@mkdir -p $(INSTALL_STAGE)
	@sed $(INSTALL_SED) systemd/sharnessd.service >$(INSTALL_STAGE)/sharnessd.service
	@sed $(INSTALL_SED) systemd/sharnessd.socket >$(INSTALL_STAGE)/sharnessd.socket
	@sed $(INSTALL_SED) systemd/sharness-relay.service >$(INSTALL_STAGE)/sharness-relay.service
	@sed $(INSTALL_SED) etc/sharnessd.json >$(INSTALL_STAGE)/sharnessd.json
	@sed $(INSTALL_SED) man/sharnessd.8 >$(INSTALL_STAGE)/sharnessd.8
	@sed $(INSTALL_SED) man/sharnessd.json.5 >$(INSTALL_STAGE)/sharnessd.json.5

install: $(BUILD)/sharnessd $(BUILD)/sharnessd-front $(BUILD)/sharness-actor $(BUILD)/sharness-client install-stage
	$(INSTALL) -d -m 0755 $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)/sharness \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSTEMDUSERUNITDIR) \
		$(DESTDIR)$(SHARNESS_ETC) $(DESTDIR)$(SHARNESS_ETC)/profiles \
		$(DESTDIR)$(WORKSPACEDIR)
	$(INSTALL) -d -m 0700 $(DESTDIR)$(SHARNESS_ETC)/certs \
		$(DESTDIR)$(LOCALSTATEDIR)/lib/sharness $(DESTDIR)$(LOCALSTATEDIR)/log/sharness
	$(INSTALL) -m 0755 $(BUILD)/sharnessd $(DESTDIR)$(SBINDIR)/sharnessd
	$(INSTALL) -m 0755 $(BUILD)/sharnessd-front $(DESTDIR)$(LIBEXECDIR)/sharness/sharnessd-front
	$(INSTALL) -m 0755 $(BUILD)/sharness-actor $(DESTDIR)$(LIBEXECDIR)/sharness/sharness-actor
	$(INSTALL) -m 0755 scripts/user-relays $(DESTDIR)$(LIBEXECDIR)/sharness/user-relays
	$(INSTALL) -m 0755 $(BUILD)/sharness-client $(DESTDIR)$(BINDIR)/sharness-client
	$(INSTALL) -m 0755 certs/mkcerts $(DESTDIR)$(BINDIR)/sharness-mkcerts
	$(INSTALL) -m 0644 man/sharness-client.1 $(DESTDIR)$(MANDIR)/man1/sharness-client.1
	$(INSTALL) -m 0644 man/sharness-mkcerts.1 $(DESTDIR)$(MANDIR)/man1/sharness-mkcerts.1
	$(INSTALL) -m 0644 $(INSTALL_STAGE)/sharnessd.json.5 $(DESTDIR)$(MANDIR)/man5/sharnessd.json.5
	$(INSTALL) -m 0644 $(INSTALL_STAGE)/sharnessd.8 $(DESTDIR)$(MANDIR)/man8/sharnessd.8
	$(INSTALL) -m 0644 $(INSTALL_STAGE)/sharnessd.service $(DESTDIR)$(SYSTEMDUNITDIR)/sharnessd.service
	$(INSTALL) -m 0644 $(INSTALL_STAGE)/sharnessd.socket $(DESTDIR)$(SYSTEMDUNITDIR)/sharnessd.socket
	$(INSTALL) -m 0644 $(INSTALL_STAGE)/sharness-relay.service $(DESTDIR)$(SYSTEMDUSERUNITDIR)/sharness-relay.service
	@$(INSTALL_CONF); \
	install_conf $(INSTALL_STAGE)/sharnessd.json $(DESTDIR)$(SHARNESS_ETC)/sharnessd.json && \
	for p in profiles/*.json; do \
		install_conf "$$p" "$(DESTDIR)$(SHARNESS_ETC)/profiles/$${p##*/}" || exit 1; \
	done
	@echo "next: sharness-mkcerts $(SHARNESS_ETC)/certs, then systemctl daemon-reload &&" \
	      "systemctl enable --now sharnessd (see docs/install.md)"

uninstall: install-stage
	@# No relay may go on running the client removed below (not in a DESTDIR:
	@# that is a package's tree, not this system).  The tree's copy: an
	@# install older than it has none.
	@if [ -z "$(DESTDIR)" ]; then sh scripts/user-relays stop; fi
	rm -f $(DESTDIR)$(SBINDIR)/sharnessd $(DESTDIR)$(LIBEXECDIR)/sharness/sharnessd-front \
		$(DESTDIR)$(LIBEXECDIR)/sharness/sharness-actor $(DESTDIR)$(LIBEXECDIR)/sharness/user-relays \
		$(DESTDIR)$(BINDIR)/sharness-client \
		$(DESTDIR)$(BINDIR)/sharness-mkcerts \
		$(DESTDIR)$(MANDIR)/man1/sharness-client.1 $(DESTDIR)$(MANDIR)/man1/sharness-mkcerts.1 \
		$(DESTDIR)$(MANDIR)/man5/sharnessd.json.5 \
		$(DESTDIR)$(MANDIR)/man8/sharnessd.8 \
		$(DESTDIR)$(SYSTEMDUNITDIR)/sharnessd.service $(DESTDIR)$(SYSTEMDUNITDIR)/sharnessd.socket \
		$(DESTDIR)$(SYSTEMDUSERUNITDIR)/sharness-relay.service
	@$(REMOVE_CONF); \
	remove_conf $(INSTALL_STAGE)/sharnessd.json $(DESTDIR)$(SHARNESS_ETC)/sharnessd.json; \
	for p in profiles/*.json; do \
		remove_conf "$$p" "$(DESTDIR)$(SHARNESS_ETC)/profiles/$${p##*/}"; \
	done
	@# Directories go only when empty: certificates, state, logs and the
	@# operator's own files stay.
	@rmdir $(DESTDIR)$(LIBEXECDIR)/sharness 2>/dev/null || true
	@for d in $(DESTDIR)$(SHARNESS_ETC)/profiles $(DESTDIR)$(SHARNESS_ETC)/certs \
		$(DESTDIR)$(SHARNESS_ETC) $(DESTDIR)$(LOCALSTATEDIR)/lib/sharness \
		$(DESTDIR)$(LOCALSTATEDIR)/log/sharness $(DESTDIR)$(WORKSPACEDIR); do \
		[ -d "$$d" ] && { rmdir "$$d" 2>/dev/null || echo "kept $$d (not empty)"; }; \
	done; true
