"""Builders of hostile input files for the bounded-reader tests (small on disk, huge when expanded)."""
from __future__ import annotations

import zipfile
from pathlib import Path

_CONTENT_TYPES = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                  'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
                  'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/'
                  'workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
                  '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-'
                  'officedocument.spreadsheetml.worksheet+xml"/></Types>')
_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
         'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
         'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WORKBOOK = ('<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
             'main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet '
             'name="Evaluations" sheetId="1" r:id="rId1"/></sheets></workbook>')
_WB_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')
_HEAD = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
         'main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Assessor</t></is></c><c r="B1" t="inlineStr"><is>'
         '<t>Object</t></is></c><c r="C1" t="inlineStr"><is><t>Score</t></is></c><c r="D1" t="inlineStr"><is><t>SD</t>'
         '</is></c></row>')
_TAIL = "</sheetData></worksheet>"


def _write(path: Path, rows_xml) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", _CONTENT_TYPES)
        z.writestr("_rels/.rels", _RELS)
        z.writestr("xl/workbook.xml", _WORKBOOK)
        z.writestr("xl/_rels/workbook.xml.rels", _WB_RELS)
        with z.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as f:
            f.write(_HEAD.encode())
            for block in rows_xml:
                f.write(block)
            f.write(_TAIL.encode())
    return path


def zip_bomb(path, cells: int = 21_000_000) -> Path:
    """A small xlsx whose one sheet expands to *cells* numeric cells (16 a row; rows without r attributes)."""
    row = b"<row>" + b"<c><v>1</v></c>" * 16 + b"</row>"
    block = row * 4096
    n_blocks = cells // (16 * 4096) + 1
    return _write(Path(path), (block for _ in range(n_blocks)))


def stray_cell(path, ref: str = "XFD1048576", rows: int = 3) -> Path:
    """A valid small panel plus one stray cell far away (the used range becomes most of the sheet)."""
    body = []
    for i in range(2, rows + 2):
        body.append(f'<row r="{i}"><c r="A{i}" t="inlineStr"><is><t>A{i % 2}</t></is></c><c r="B{i}" t="inlineStr">'
                    f'<is><t>x{i // 2}</t></is></c><c r="C{i}"><v>{i % 7 + 1}</v></c><c r="D{i}"><v>1</v></c></row>')
    row = "".join(ch for ch in ref if ch.isdigit())
    body.append(f'<row r="{row}"><c r="{ref}" t="inlineStr"><is><t>stray</t></is></c></row>')
    return _write(Path(path), [("".join(body)).encode()])


def ods(path, rows, repeat_rows: int = 1, repeat_columns: int = 1) -> Path:
    """A minimal OpenDocument spreadsheet (sheet Evaluations); the last row can be repeated (a repeat-bomb)."""
    def cell(value):
        if isinstance(value, (int, float)):
            return (f'<table:table-cell office:value-type="float" office:value="{value}" '
                    f'table:number-columns-repeated="{repeat_columns}"><text:p>{value}</text:p></table:table-cell>'
                    if repeat_columns > 1 else
                    f'<table:table-cell office:value-type="float" office:value="{value}"><text:p>{value}</text:p>'
                    '</table:table-cell>')
        return f'<table:table-cell office:value-type="string"><text:p>{value}</text:p></table:table-cell>'

    body = []
    for i, row in enumerate(rows):
        rep = f' table:number-rows-repeated="{repeat_rows}"' if i == len(rows) - 1 and repeat_rows > 1 else ""
        body.append(f"<table:table-row{rep}>" + "".join(cell(v) for v in row) + "</table:table-row>")
    content = ('<?xml version="1.0" encoding="UTF-8"?><office:document-content '
               'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
               'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
               'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"><office:body>'
               '<office:spreadsheet><table:table table:name="Evaluations">' + "".join(body) +
               "</table:table></office:spreadsheet></office:body></office:document-content>")
    manifest = ('<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:'
                'opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" '
                'manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry '
                'manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>')
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet", compress_type=zipfile.ZIP_STORED)
        z.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("META-INF/manifest.xml", manifest, compress_type=zipfile.ZIP_DEFLATED)
    return Path(path)
