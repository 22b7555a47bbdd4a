#ifndef XMPPLOAD_CLIBXML2_SHIM_H
#define XMPPLOAD_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
/* Keep ICU headers out: they clash with Foundation's _FoundationICU module ("'U_...' from module
   '_FoundationICU' is not present in definition of 'enum UErrorCode'"). Never touch
   xmlCharEncodingHandler from Swift because of this. */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#endif
