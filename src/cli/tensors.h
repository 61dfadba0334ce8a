/*
 * tensors.h - `gpumemguard --tensors` (cli): the settings that make the
 * frameworks hand every tensor to the driver, merged with the user's own.
 */
#ifndef GMG_CLI_TENSORS_H
#define GMG_CLI_TENSORS_H

#include <stddef.h>

/* A PyTorch allocator setting with backend:cudaMallocAsync: the user's value
 * `user` (NULL: none) with its own backend entry replaced and every other
 * entry kept, in order. Returns 0, or -1 when out doesn't hold it. */
int gmg_tensors_torch_conf(const char *user, char *out, size_t outlen);

/* Set the environment for --tensors: PyTorch's PYTORCH_CUDA_ALLOC_CONF and,
 * when the user set it, PYTORCH_ALLOC_CONF (each merged),
 * TF_GPU_ALLOCATOR=cuda_malloc_async, XLA_PYTHON_CLIENT_ALLOCATOR=platform.
 * Returns 0, or -1 with errno set (setenv). */
int gmg_tensors_setenv(void);

#endif
