/* The program the tests and the recorded transcripts debug: a struct, a function to
 * step into and finish, a global to watch, a non-zero exit code, and an endless loop
 * (with the argument "spin") to interrupt. */
#include <stdio.h>
#include <string.h>

struct point {
    int x;
    int y;
    const char *name;
};

int counter = 0;
unsigned char buffer[40000];

static inline __attribute__((always_inline)) int twice(int n) {
    return n * 2;
}

int square(int n) {
    int result = n * n;
    counter += result;
    return result;
}

void spin(void) {
    volatile unsigned long i = 0;
    for (;;) {
        i++;
    }
}

int main(int argc, char **argv) {
    struct point p = {3, 4, "origin\t\"quoted\" \xc3\xa9"};
    int total = 0;
    memset(buffer, 0xab, sizeof buffer);
    for (int i = 1; i <= 3; i++) {
        total += square(i);
    }
    total += twice(p.x) + twice(p.y);
    printf("total=%d\n", total);
    if (argc > 1 && strcmp(argv[1], "spin") == 0) {
        spin();
    }
    return total % 16;
}
