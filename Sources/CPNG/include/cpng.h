#ifndef DR_CPNG_H
#define DR_CPNG_H
int dr_png_placeholder(void);
#endif
