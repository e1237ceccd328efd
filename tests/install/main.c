#include <gpufmm.h>
#include <stdio.h>
int main(void) { printf("gpufmm %s\n", gpufmm_version(0, 0, 0)); return 0; }
