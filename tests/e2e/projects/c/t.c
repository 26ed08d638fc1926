#include <stdio.h>
int add(int a, int b);
int main(void)
{
	if (add(2, 3) != 5) {
		puts("FAIL add");
		return 1;
	}
	puts("c: 1 test passed");
	return 0;
}
