#ifndef DR_CJPEG_H
#define DR_CJPEG_H
int dr_jpeg_placeholder(void);
#endif
