#pragma once
// Asio, included the same way by every translation unit. Asio decides per unit whether its handler
// memory comes from aligned_alloc (freed with free) or from operator new (freed with delete), by
// whether a libstdc++ header was read before it (_GLIBCXX_HAVE_ALIGNED_ALLOC). Units that include
// asio first and units that do not would then allocate with one and free with the other (an
// AddressSanitizer alloc-dealloc-mismatch in every daemon). Include this file, never <asio.hpp>.
#include <cstdlib>  // libstdc++'s configuration first, so that asio sees aligned_alloc

#include <asio.hpp>

#if !defined(ASIO_HAS_STD_ALIGNED_ALLOC)
#error "asio does not use aligned_alloc here: every unit must still agree (see the comment above)"
#endif
