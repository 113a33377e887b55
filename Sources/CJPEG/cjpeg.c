/* placeholder: the Imaging owner writes the JPEG shim here */
#include "cjpeg.h"
int dr_jpeg_placeholder(void) { return 0; }
