// What the distributed sources share (src/dist only).
#pragma once

#include <string>

#include "gemmkit/distributed.hpp"

namespace gemmkit::dist {

// The MPI datatype of a distributed dtype; a usage error for the others.
MPI_Datatype mpi_type(DType dtype);
// An element count as MPI's int, or a usage error naming `what` when it does not fit.
int mpi_count(std::int64_t elements, const std::string& what);
// A zero rows x cols matrix of a distributed dtype.
AnyMatrix zero_matrix(DType dtype, std::int64_t rows, std::int64_t cols);

}  // namespace gemmkit::dist
