// SPDX-License-Identifier: MIT
/*
 * fuzz_wire.c - libFuzzer target: bdump-recv's message parser on arbitrary
 * bytes from a peer: wire_recv() with the hello limit and then the data
 * limit, and the payload checks of CLI_HELLO, SEGMENT and FIN. Input byte 0
 * chooses a channel already keyed (fixed keys: exercises the MAC checks)
 * or not. Never a crash, a leak or undefined behaviour; every refusal has
 * a message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "wire.h"

static uint8_t buf[AE_WIRE_MAX_LEN];

static void parse(const struct ae_w_hdr *h)
{
	struct ae_w_cli_hello ch;
	struct ae_w_segment sg;
	struct ae_w_fin fin;
	const uint8_t *d;
	size_t len;
	char err[256] = "";

	if (h->type == AE_W_CLI_HELLO && wire_parse_cli_hello(h, buf, &ch, err, sizeof(err)) && !err[0])
		abort();
	if (h->type == AE_W_SEGMENT && !wire_parse_segment(h, buf, &sg, &d, &len, err, sizeof(err)) &&
	    (d != buf + sizeof(sg) || len + sizeof(sg) != h->len))
		abort();
	if (h->type == AE_W_FIN)
		wire_parse_fin(h, buf, &fin, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t n1[AE_WIRE_NONCE] = { 1 }, n2[AE_WIRE_NONCE] = { 2 };
	static const uint8_t tok[AE_WIRE_TOKEN] = { 3 };
	struct wire_chan c = { 0 };
	struct ae_w_hdr h;
	char err[512];
	int sv[2], ret, first = 1;

	if (!size || size > 60000)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		abort();
	if (write(sv[1], data + 1, size - 1) != (ssize_t)(size - 1))
		abort();
	close(sv[1]);
	c.fd = sv[0];
	if (data[0] & 1)
		wire_chan_key(&c, 1, NULL, 0, n1, n2, tok);
	for (int i = 0; i < 1000; i++) {
		err[0] = 0;
		ret = wire_recv(&c, &h, buf, first ? AE_WIRE_HELLO_MAX : AE_WIRE_MAX_LEN,
				wire_now_ms() + 1000, err, sizeof(err));
		if (ret < 0 && !err[0])
			abort();	/* a refusal always says why */
		if (ret <= 0)
			break;
		if (h.len > (first ? AE_WIRE_HELLO_MAX : AE_WIRE_MAX_LEN))
			abort();
		parse(&h);
		first = 0;
	}
	close(sv[0]);
	return 0;
}
