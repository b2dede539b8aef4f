# docker/coturn.Dockerfile: Debian's coturn as the TURN relay of a papo
# room, with docker/turnserver.conf (docker/README.md; compose.yaml runs
# it as the service "coturn").  Build from the repository's root:
#
#   docker build -f docker/coturn.Dockerfile -t papo-coturn .
#
# One stage: the coturn package of Debian 12, the config and the
# entrypoint, which adds the REST secret from TURN_SECRET at start.  It
# runs as Debian's unprivileged "turnserver" user; its only writes go to
# /tmp (a tmpfs in compose.yaml): the config with the secret, and the
# SQLite database coturn opens even when it holds nobody.

FROM debian:12-slim
RUN apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        coturn >/dev/null && \
    rm -rf /var/lib/apt/lists/*
COPY docker/turnserver.conf /etc/coturn/turnserver.conf
COPY docker/coturn-entrypoint.sh /usr/local/bin/coturn-entrypoint.sh
RUN chmod 0644 /etc/coturn/turnserver.conf && \
    chmod 0755 /usr/local/bin/coturn-entrypoint.sh
USER turnserver
# STUN/TURN on 3478/udp, and the relayed addresses (min-port..max-port of
# turnserver.conf).  compose.yaml runs it on the host's network instead:
# Docker publishing 256 UDP ports costs a proxy process or a rule each.
EXPOSE 3478/udp 49152-49407/udp
STOPSIGNAL SIGTERM
ENTRYPOINT ["coturn-entrypoint.sh"]
