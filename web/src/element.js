/* element.js - the base class of every element of the UI: a LitElement
 * that renders into its own light DOM, so that the one stylesheet
 * (app.css) styles everything and labels, forms and focus work across
 * components as in a plain page. */
import { LitElement } from 'lit';

export class TesseraElement extends LitElement {
  createRenderRoot() {
    return this;
  }
}
