/*
 * err.h: the error convention of papo's C code.  Functions return 0 on
 * success and -1 on failure; where a person needs the reason, the first
 * parameter is an error buffer of PAPO_ERR_LEN bytes that receives one
 * line without a trailing newline.
 */
#ifndef PAPO_ERR_H
#define PAPO_ERR_H

#define PAPO_ERR_LEN 256

/* Formats one line into err (cut to fit). */
void err_set(char err[PAPO_ERR_LEN], const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
