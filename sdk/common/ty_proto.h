/*
 * ty_proto.h — pprof's profile.proto as numbers: the field numbers of its
 * messages and the protocol buffer wire types.
 *
 * Shared by the SDK's profile writer (ty_pprof.c) and the runner's reader
 * (runner/report/pprof_read.c), so what one writes the other reads by the same
 * numbers. Names follow the .proto (Profile.sample_type is
 * PROFILE_SAMPLE_TYPE); only the fields testyard writes or reads are here.
 * Internal to testyard.
 */
#ifndef TY_PROTO_H
#define TY_PROTO_H

/* profile.proto field numbers */
enum {
    PROFILE_SAMPLE_TYPE = 1,
    PROFILE_SAMPLE = 2,
    PROFILE_MAPPING = 3,
    PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6,
    PROFILE_TIME_NANOS = 9,
    PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12,
    VALUETYPE_TYPE = 1,
    VALUETYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1,
    SAMPLE_VALUE = 2,
    SAMPLE_LABEL = 3,
    LABEL_KEY = 1,
    LABEL_NUM = 3,
    MAPPING_ID = 1,
    MAPPING_START = 2,
    MAPPING_LIMIT = 3,
    MAPPING_OFFSET = 4,
    MAPPING_FILENAME = 5,
    MAPPING_BUILD_ID = 6,
    MAPPING_HAS_FUNCTIONS = 7,
    LOCATION_ID = 1,
    LOCATION_MAPPING_ID = 2,
    LOCATION_ADDRESS = 3,
    LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1,
    FUNCTION_ID = 1,
    FUNCTION_NAME = 2,
    FUNCTION_SYSTEM_NAME = 3,
    FUNCTION_FILENAME = 4,
};

/* Wire types: the low three bits of a field's key. */
enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

#endif
