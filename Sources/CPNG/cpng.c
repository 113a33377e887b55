#include "cpng.h"
int dr_png_placeholder(void) { return 0; }
