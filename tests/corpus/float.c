/* Covers: floating point (SSE scalar double and float arithmetic, sqrt,
 * int/float conversions, comparisons driving branches, libm calls). */
#include <math.h>
#include <stdio.h>

int main(void)
{
	double x = 0.5, s = 0;
	float f = 1.0f;
	int i, neg = 0;

	for (i = 1; i < 6000; i++) {
		x = x * 3.7 * (1 - x);			/* logistic map */
		s += sqrt(x) / i;
		f = f * 1.0001f + (float)x;
		if (x < 0.3)
			neg++;
		if ((i & 255) == 0)
			s += sin(s) + exp(-x) + log(1 + f);
	}
	printf("float %.9f %.3f %d %ld\n", s, f, neg, lrint(s * 1e6));
	return 0;
}
