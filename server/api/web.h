/*
 * web.h: the dashboard.  GET /, /app.js and /style.css answer with the
 * files of web/, built into the binary, under a strict
 * Content-Security-Policy.  They hold no room data, so they are served
 * without the token; the page asks for it and sends it with every API
 * call.
 */
#ifndef PAPO_WEB_H
#define PAPO_WEB_H

#include <stddef.h>

#include "server/http/http.h"

/* The routes, for an http_mount whose arg is unused. */
const struct http_route *web_routes(size_t *n);

#endif
