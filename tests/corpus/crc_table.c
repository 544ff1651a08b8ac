/* Covers: table-driven computation (CRC-32 with a generated table),
 * byte loads with computed addresses, bit manipulation loops. */
#include <stdio.h>

static unsigned table[256];

int main(void)
{
	static unsigned char data[8192];
	unsigned crc = 0xffffffff, i, k;

	for (i = 0; i < 256; i++) {
		unsigned c = i;

		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320 ^ (c >> 1) : c >> 1;
		table[i] = c;
	}
	for (i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + (i >> 5));
	for (i = 0; i < sizeof(data); i++)
		crc = table[(crc ^ data[i]) & 255] ^ (crc >> 8);
	printf("crc_table %08x %d\n", crc ^ 0xffffffff, __builtin_popcount(crc));
	return 0;
}
